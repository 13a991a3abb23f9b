// Request a WebGPU adapter and device once, and say why when there is none. Works with the browser's
// navigator.gpu and with the Node 'webgpu' package's GPU object (web/webgpu/node_gpu.mjs).
//   requestAttentionDevice({gpu}) -> {device, adapterDescription, lost, reason}
// device is null and reason says why ("no navigator.gpu", "no adapter", "requestDevice failed: ...")
// when WebGPU cannot run here; the page shows the reason beside the backend that ran instead.

// What the attention kernel needs beyond WebGPU's defaults: large storage bindings for [B,H,T,S]
// weights (the default 128 MiB holds 32M floats). Asked for up to what the adapter offers.
const WANTED_LIMITS = ['maxStorageBufferBindingSize', 'maxBufferSize'];

export function describeAdapter(adapter) {
  const info = adapter.info ?? {};
  const text = (x) => (typeof x === 'string' ? x : '');
  // Dawn: description "SwiftShader driver 5.0.0", vendor "google", architecture "swiftshader";
  // browsers often give only vendor and architecture ("nvidia ampere"), or nothing at all.
  const where = [text(info.vendor), text(info.architecture)].filter(Boolean).join(' ');
  if (info.description) return where ? `${info.description} (${where})` : info.description;
  return where || 'unknown WebGPU adapter';
}

export async function requestAttentionDevice({ gpu, powerPreference = 'high-performance' } = {}) {
  const unavailable = (reason) => ({ device: null, adapterDescription: '', lost: null, reason });
  if (!gpu) return unavailable('no navigator.gpu');
  let adapter;
  try {
    adapter = await gpu.requestAdapter({ powerPreference });
  } catch (error) {
    return unavailable(`requestAdapter failed: ${error?.message ?? error}`);
  }
  if (!adapter) return unavailable('no adapter');
  const requiredLimits = {};
  for (const name of WANTED_LIMITS) {
    if (adapter.limits?.[name]) requiredLimits[name] = adapter.limits[name];
  }
  let device;
  try {
    device = await adapter.requestDevice({ label: 'attnlab device', requiredLimits });
  } catch (error) {
    return unavailable(`requestDevice failed: ${error?.message ?? error}`);
  }
  if (!device) return unavailable('requestDevice failed: no device returned');
  // Resolves with a reason string; 'destroyed' when we destroyed it ourselves.
  const lost = device.lost.then((info) => `device lost (${info?.reason ?? 'unknown'}): ${info?.message ?? ''}`.trim());
  return { device, adapterDescription: describeAdapter(adapter), lost, reason: '' };
}
