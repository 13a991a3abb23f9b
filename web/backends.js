// Backend names in the order of core/backend.h's enum class Backend (tests/node/enums.test.mjs checks).
export const BACKENDS = ['scalar', 'simd128', 'webgpu'];
export const BACKEND_LABELS = { scalar: 'scalar', simd128: 'SIMD128', webgpu: 'WebGPU' };
export const BACKEND_REQUESTS = ['auto', 'webgpu', 'simd', 'scalar'];
