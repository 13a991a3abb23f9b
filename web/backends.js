// Backend names in the order of core/backend.h's enum class Backend (tests/node/enums.test.mjs checks).
export const BACKENDS = ['scalar', 'simd128', 'webgpu'];
export const BACKEND_LABELS = { scalar: 'scalar', simd128: 'SIMD128', webgpu: 'WebGPU' };
export const BACKEND_REQUESTS = ['auto', 'webgpu', 'simd', 'scalar'];
// What a request names when it names one backend: `simd` is the settings' and the CLI's short name
// for simd128 (the one alias; attnlab.js's backend codes take both spellings too).
export const REQUEST_ALIASES = { simd: 'simd128' };
export const backendOfRequest = (requested) => REQUEST_ALIASES[requested] ?? requested;
