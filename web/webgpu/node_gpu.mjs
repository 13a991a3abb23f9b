// WebGPU in Node, for the parity tests and the benchmark: the npm 'webgpu' package (Dawn) on whatever
// Vulkan driver exists; on machines without a GPU that is SwiftShader, the CPU Vulkan driver that
// ships with Chromium.
//   nodeGpu() -> {gpu, reason}: gpu is null and reason says what is missing when it cannot run.
import { existsSync } from 'node:fs';
import os from 'node:os';

export const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';
// Chromium's own copy of the Vulkan loader. Dawn dlopen()s "libvulkan.so.1"; where the system has no
// libvulkan1 package, loading Chromium's copy first (by path, kept loaded with RTLD_NODELETE = 0x1000,
// a glibc value that os.constants.dlopen does not list) makes that dlopen find it by its soname.
const CHROMIUM_VULKAN_LOADER = '/usr/lib/chromium/libvulkan.so.1';
const RTLD_NODELETE = 0x1000;

function preloadVulkanLoader() {
  if (process.platform !== 'linux' || !existsSync(CHROMIUM_VULKAN_LOADER)) return;
  const flags = os.constants.dlopen.RTLD_NOW | os.constants.dlopen.RTLD_GLOBAL | RTLD_NODELETE;
  try {
    process.dlopen({ exports: {} }, CHROMIUM_VULKAN_LOADER, flags);
  } catch {
    // Expected: it is a plain library, not a Node addon ("did not self-register"); it stays loaded.
  }
}

let cached;
export async function nodeGpu() {
  cached ??= (async () => {
    if (!process.env.VK_ICD_FILENAMES && existsSync(SWIFTSHADER_ICD)) {
      process.env.VK_ICD_FILENAMES = SWIFTSHADER_ICD; // read by the Vulkan loader at adapter request
    }
    preloadVulkanLoader();
    let webgpu;
    try {
      webgpu = await import('webgpu');
    } catch (error) {
      return { gpu: null, reason: `the npm package 'webgpu' is not installed (npm ci): ${error.message}` };
    }
    Object.assign(globalThis, webgpu.globals); // GPUBufferUsage, GPUMapMode, ... as in a browser
    return { gpu: webgpu.create([]), reason: '' };
  })();
  return cached;
}
