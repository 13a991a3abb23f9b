// The WebGPU backend of the attention kernel: the same op as core/attention.h (layout, mask strides,
// zero rows for fully masked queries), run by the WGSL shaders in web/webgpu/shaders/.
//
//   const { attention, reason } = await WebGpuAttention.create({ gpu: navigator.gpu });
//   const { weights, out } = await attention.forward({ B, H, T, S, D, q, k, v, mask?, ..., call? });
//   const { dQ, dK, dV } = await attention.backward({ dOut, dWeights?, call? });
//
// forward keeps q, k, v and the weights on the GPU, and backward works from them, so a training step
// uploads q, k, v and dOut once. Each `call` (a name; default 'step') has its own buffers and its own
// resident forward, so a model that calls attention more than once a step, or a page section that
// runs the kernel between a training step's forward and backward, never overwrites another's tensors.
// Each call reads its results back with exactly one mapAsync. Buffers live in named slots that are reused
// while the sizes fit and grow when they do not; pipelines are made once per (shader, workgroup size).
// Calls are queued: a second call waits for the first.
import { SHADERS } from './shaders.generated.js';
import { requestAttentionDevice } from './device.js';
import { BufferPool } from './buffer_pool.js';
import { PipelineCache } from './pipelines.js';

// 64 threads: two warps / one wavefront; the reductions need a power of two.
const DEFAULT_WORKGROUP_SIZE = 64;
// The Params struct shared by every shader: 12 four-byte fields (see attention_forward.wgsl).
const PARAMS_BYTES = 48;
const MAX_GROUPS_PER_DIMENSION = 65535; // WebGPU's default maxComputeWorkgroupsPerDimension

export class WebGpuError extends Error {
  constructor(message) {
    super(message);
    this.name = 'WebGpuError';
  }
}

/**
 * The device went away (driver reset, GPU process lost, destroy()): the one WebGPU failure a
 * training run survives by carrying on on the CPU. Any other WebGpuError or TypeError is a bug in how
 * the API was called and must fail loudly.
 */
export class WebGpuDeviceLost extends WebGpuError {
  constructor(message) {
    super(message);
    this.name = 'WebGpuDeviceLost';
  }
}

const isShared = (array) => typeof SharedArrayBuffer !== 'undefined' && array.buffer instanceof SharedArrayBuffer;

// count workgroups as (x, y) with x <= 65535; the shaders rebuild the index from num_workgroups.x.
function foldGroups(count) {
  const x = Math.max(1, Math.min(count, MAX_GROUPS_PER_DIMENSION));
  return [x, Math.ceil(count / x)];
}

function checkDim(name, value) {
  if (!Number.isInteger(value) || value < 1 || value > 65536) {
    throw new WebGpuError(`${name} must be an integer in [1, 65536], got ${value}`);
  }
}

function checkArray(name, array, length, shape) {
  if (!(array instanceof Float32Array)) {
    throw new WebGpuError(`${name} must be a Float32Array, got ${array?.constructor?.name ?? typeof array}`);
  }
  if (length !== undefined && array.length !== length) {
    throw new WebGpuError(`${name} must have ${shape} = ${length} elements, got ${array.length}`);
  }
}

export class WebGpuAttention {
  /** -> {attention, reason}: attention is null and reason says why when WebGPU cannot run here. */
  static async create({ gpu, shaders = SHADERS, workgroupSize = DEFAULT_WORKGROUP_SIZE } = {}) {
    if (!Number.isInteger(workgroupSize) || workgroupSize < 1 || (workgroupSize & (workgroupSize - 1)) !== 0) {
      throw new WebGpuError(`workgroupSize must be a power of two, got ${workgroupSize}`);
    }
    const found = await requestAttentionDevice({ gpu });
    if (!found.device) return { attention: null, reason: found.reason };
    const attention = new WebGpuAttention(found, shaders, workgroupSize);
    try {
      await attention._compileAll();
    } catch (error) {
      attention.destroy();
      return { attention: null, reason: `WebGPU shaders did not compile: ${error.message}` };
    }
    return { attention, reason: '' };
  }

  constructor({ device, adapterDescription, lost }, shaders, workgroupSize) {
    this.device = device;
    this.adapterDescription = adapterDescription;
    this._lost = lost;
    this._isLost = false;
    lost.then(() => {
      this._isLost = true;
    });
    this.workgroupSize = workgroupSize;
    this.pool = new BufferPool(device);
    this.pipelines = new PipelineCache(device, shaders);
    this._slots = new Map(); // name -> GPUBuffer, reused while big enough
    this._unsharedCopies = new Map(); // name -> Float32Array, reused while big enough (see _upload)
    this._lastSubmitDone = Promise.resolve();
    this._tail = Promise.resolve();
    this._resident = new Map(); // call -> the last forward's shape and scale
    this._destroyed = false;
    const usage = GPUBufferUsage.STORAGE;
    // Bound where a shader's optional input (mask, dWeights) is absent: WebGPU has no null binding.
    this._placeholder = this.pool.acquire(16, usage, 'attnlab placeholder (no mask / no dWeights)');
  }

  /** Resolves with a reason string if the device is lost (also after destroy()). */
  get lost() {
    return this._lost;
  }

  _compileAll() {
    const overrides = { WORKGROUP_SIZE: this.workgroupSize };
    return Promise.all(Object.keys(this.pipelines.sources).map((name) => this.pipelines.get(name, overrides)));
  }

  _pipeline(name) {
    return this.pipelines.get(name, { WORKGROUP_SIZE: this.workgroupSize });
  }

  // The buffer in slot `name`, at least `bytes` large; a smaller one goes back to the pool once the
  // last submit that may use it has completed.
  _slot(name, bytes, usage) {
    const current = this._slots.get(name);
    if (current && current.size >= bytes && current.usage === usage) return current;
    if (current) this.pool.release(current, this._lastSubmitDone);
    const buffer = this.pool.acquire(bytes, usage, `attnlab ${name}`);
    this._slots.set(name, buffer);
    return buffer;
  }

  _storage(name, bytes, extraUsage = 0) {
    return this._slot(name, bytes, GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | extraUsage);
  }

  _upload(name, array, extraUsage = 0) {
    const buffer = this._storage(name, array.byteLength, extraUsage);
    const source = isShared(array) ? this._unshared(name, array) : array;
    this.device.queue.writeBuffer(buffer, 0, source.buffer, source.byteOffset, source.byteLength);
    return buffer;
  }

  // A threads build keeps the WASM heap in a SharedArrayBuffer. The spec lets writeBuffer read shared
  // memory, but not every implementation does (the npm 'webgpu' package rejects it: "no overload
  // matched"), so views of shared memory go through a plain array first: one memcpy per upload.
  _unshared(name, array) {
    let copy = this._unsharedCopies.get(name);
    if (!copy || copy.length < array.length) {
      copy = new Float32Array(array.length);
      this._unsharedCopies.set(name, copy);
    }
    const view = copy.subarray(0, array.length);
    view.set(array);
    return view;
  }

  // Whether the device is gone: already known, or reported within `graceMs` (a destroyed device
  // rejects a pending mapAsync before its lost promise settles). -> the reason, or null.
  async _lostReason(graceMs = 100) {
    if (this._destroyed) return 'this WebGpuAttention was destroyed';
    const timeout = new Promise((resolve) => setTimeout(() => resolve(null), graceMs));
    return Promise.race([this._lost, timeout]);
  }

  _writeParams(name, { B, H, T, S, D, maskStrideB = 0, maskStrideH = 0, hasMask = false, hasDWeights = false, scale }) {
    const data = new ArrayBuffer(PARAMS_BYTES);
    const u32 = new Uint32Array(data);
    const f32 = new Float32Array(data);
    u32.set([B, H, T, S, D, maskStrideB, maskStrideH, hasMask ? 1 : 0, hasDWeights ? 1 : 0]);
    f32[9] = scale;
    f32[10] = -Infinity; // neg_inf: WGSL cannot spell infinity as a constant
    const buffer = this._slot(name, PARAMS_BYTES, GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST);
    this.device.queue.writeBuffer(buffer, 0, data);
    return buffer;
  }

  _bindGroup(pipeline, label, buffers) {
    return this.device.createBindGroup({
      label,
      layout: pipeline.getBindGroupLayout(0),
      entries: buffers.map((buffer, binding) => ({ binding, resource: { buffer } })),
    });
  }

  // Submits the encoder, then copies `parts` ([buffer, floats]) out through one staging buffer with
  // one mapAsync; -> Float32Array per part.
  async _submitAndRead(encoder, stagingName, parts) {
    const total = parts.reduce((sum, [, floats]) => sum + floats * 4, 0);
    const staging = this._slot(stagingName, total, GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST);
    let offset = 0;
    for (const [buffer, floats] of parts) {
      encoder.copyBufferToBuffer(buffer, 0, staging, offset, floats * 4);
      offset += floats * 4;
    }
    this.device.queue.submit([encoder.finish()]);
    this._lastSubmitDone = this.device.queue.onSubmittedWorkDone();
    try {
      await staging.mapAsync(GPUMapMode.READ, 0, total);
    } catch (error) {
      const lost = await this._lostReason();
      if (lost) throw new WebGpuDeviceLost(`WebGPU ${lost}`);
      throw new WebGpuError(`WebGPU readback failed: ${error?.message ?? error}`);
    }
    const mapped = new Float32Array(staging.getMappedRange(0, total));
    const results = [];
    offset = 0;
    for (const [, floats] of parts) {
      results.push(mapped.slice(offset, offset + floats));
      offset += floats;
    }
    staging.unmap();
    return results;
  }

  _serial(run) {
    const next = this._tail.then(() => {
      if (this._destroyed) throw new WebGpuDeviceLost('this WebGpuAttention was destroyed');
      if (this._isLost) throw new WebGpuDeviceLost('the WebGPU device was lost');
      return run();
    });
    this._tail = next.catch(() => {});
    return next;
  }

  _checkFits(name, floats) {
    const limit = this.device.limits.maxStorageBufferBindingSize;
    if (floats * 4 > limit) {
      throw new WebGpuError(`${name} needs ${floats * 4} bytes, more than this adapter binds (${limit} bytes)`);
    }
  }

  /**
   * {B, H, T, S, D, scale?, q, k, v, mask?, maskStrideB?, maskStrideH?, readWeights?} -> {weights [B,H,T,S], out [B,H,T,D]}
   * mask: additive, element (b, h, t, s) at b*maskStrideB + h*maskStrideH + t*S + s; -Infinity blocks.
   * readWeights: false reads back only `out` (weights is then null): a training step needs the
   * weights only for the backward pass, which uses the copy that stays on the GPU.
   */
  forward(args) {
    return this._serial(() => this._forward(args ?? {}));
  }

  async _forward({ B, H, T, S, D, scale, q, k, v, mask, maskStrideB = 0, maskStrideH = 0,
    readWeights = true, call = 'step' }) {
    const slot = (name) => (call === 'step' ? name : `${call}:${name}`);
    for (const [name, value] of Object.entries({ B, H, T, S, D })) checkDim(name, value);
    const qN = B * H * T * D;
    const kvN = B * H * S * D;
    const wN = B * H * T * S;
    checkArray('q', q, qN, 'B*H*T*D');
    checkArray('k', k, kvN, 'B*H*S*D');
    checkArray('v', v, kvN, 'B*H*S*D');
    const hasMask = mask !== undefined && mask !== null;
    if (hasMask) {
      checkArray('mask', mask);
      for (const [name, stride] of [['maskStrideB', maskStrideB], ['maskStrideH', maskStrideH]]) {
        if (!Number.isInteger(stride) || stride < 0) throw new WebGpuError(`${name} must be a non-negative `
          + `integer, got ${stride}`);
      }
      const needed = (B - 1) * maskStrideB + (H - 1) * maskStrideH + T * S;
      if (mask.length < needed) {
        throw new WebGpuError(`mask must have at least ${needed} elements for its strides, got ${mask.length}`);
      }
    }
    this._checkFits('weights [B,H,T,S]', wN);
    const s = scale ?? 1 / Math.sqrt(D);
    if (!Number.isFinite(s)) throw new WebGpuError(`scale must be a finite number, got ${scale}`);

    const params = this._writeParams('forward params', {
      B, H, T, S, D, maskStrideB, maskStrideH, hasMask, scale: s,
    });
    const qBuf = this._upload(slot('q'), q);
    const kBuf = this._upload(slot('k'), k);
    const vBuf = this._upload(slot('v'), v);
    const maskBuf = hasMask ? this._upload(slot('mask'), mask) : this._placeholder;
    const weights = this._storage(slot('weights'), wN * 4, GPUBufferUsage.COPY_SRC);
    const out = this._storage(slot('out'), qN * 4, GPUBufferUsage.COPY_SRC);

    const pipeline = await this._pipeline('attention_forward');
    const encoder = this.device.createCommandEncoder({ label: 'attnlab attention forward' });
    const pass = encoder.beginComputePass({ label: 'attnlab attention_forward' });
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, this._bindGroup(pipeline, 'attnlab attention_forward bindings',
      [params, qBuf, kBuf, vBuf, maskBuf, weights, out]));
    pass.dispatchWorkgroups(...foldGroups(B * H * T));
    pass.end();
    const parts = readWeights ? [[weights, wN], [out, qN]] : [[out, qN]];
    const read = await this._submitAndRead(encoder, readWeights ? 'forward readback' : 'forward readback (out)', parts);
    this._resident.set(call, { B, H, T, S, D, scale: s });
    return readWeights ? { weights: read[0], out: read[1] } : { weights: null, out: read[0] };
  }

  /** {dOut [B,H,T,D], dWeights? [B,H,T,S]} -> {dQ, dK, dV}, from the last forward's tensors. */
  backward(args) {
    return this._serial(() => this._backward(args ?? {}));
  }

  async _backward({ dOut, dWeights, call = 'step' }) {
    const resident = this._resident.get(call);
    if (!resident) throw new WebGpuError(call === 'step' ? 'backward needs a forward first' : 'backward of call '
      + `'${call}' needs a forward of that call first`);
    const { B, H, T, S, D, scale } = resident;
    const slot = (name) => (call === 'step' ? name : `${call}:${name}`);
    const qN = B * H * T * D;
    const kvN = B * H * S * D;
    const wN = B * H * T * S;
    checkArray('dOut', dOut, qN, 'B*H*T*D');
    const hasDWeights = dWeights !== undefined && dWeights !== null;
    if (hasDWeights) checkArray('dWeights', dWeights, wN, 'B*H*T*S');

    const params = this._writeParams('backward params', { B, H, T, S, D, hasDWeights, scale });
    const [qBuf, kBuf, vBuf, weights] = ['q', 'k', 'v', 'weights'].map((name) => this._slots.get(slot(name)));
    const dOutBuf = this._upload(slot('dOut'), dOut);
    const dWeightsBuf = hasDWeights ? this._upload(slot('dWeights'), dWeights) : this._placeholder;
    const dScores = this._storage(slot('dScores'), wN * 4);
    const dQ = this._storage(slot('dQ'), qN * 4, GPUBufferUsage.COPY_SRC);
    const dK = this._storage(slot('dK'), kvN * 4, GPUBufferUsage.COPY_SRC);
    const dV = this._storage(slot('dV'), kvN * 4, GPUBufferUsage.COPY_SRC);

    const steps = [
      ['attention_backward_dscores', [params, vBuf, weights, dOutBuf, dWeightsBuf, dScores], B * H * T],
      ['attention_backward_dq', [params, kBuf, dScores, dQ], Math.ceil(qN / this.workgroupSize)],
      ['attention_backward_transposed', [params, dScores, qBuf, dK], Math.ceil(kvN / this.workgroupSize)],
       // dK = dS^T Q
      ['attention_backward_transposed', [params, weights, dOutBuf, dV],
        Math.ceil(kvN / this.workgroupSize)],  // dV = W^T dO
    ];
    const pipelines = await Promise.all(steps.map(([name]) => this._pipeline(name)));
    const encoder = this.device.createCommandEncoder({ label: 'attnlab attention backward' });
    steps.forEach(([name, buffers, groups], i) => {
      const pass = encoder.beginComputePass({ label: `attnlab ${name}` });
      pass.setPipeline(pipelines[i]);
      pass.setBindGroup(0, this._bindGroup(pipelines[i], `attnlab ${name} bindings`, buffers));
      pass.dispatchWorkgroups(...foldGroups(groups));
      pass.end();
    });
    const [q, k, v] = await this._submitAndRead(encoder, 'backward readback', [[dQ, qN], [dK, kvN], [dV, kvN]]);
    return { dQ: q, dK: k, dV: v };
  }

  destroy() {
    if (this._destroyed) return;
    this._destroyed = true;
    for (const buffer of this._slots.values()) this.pool.release(buffer);
    this._slots.clear();
    this._unsharedCopies.clear();
    this.pool.destroy();
    this.device.destroy();
  }
}
