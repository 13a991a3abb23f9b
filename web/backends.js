// Backend names in the order of core/backend.h's enum class Backend (tests/node/enums.test.mjs checks).
import { BACKEND_ALIASES } from '../wasm_bindings/js/checks.js';

export const BACKENDS = ['scalar', 'simd128', 'webgpu'];
export const BACKEND_LABELS = { scalar: 'scalar', simd128: 'SIMD128', webgpu: 'WebGPU' };
// What a request names when it names one backend: `simd` is the settings' and the CLI's short name
// for simd128, the one alias, declared with the module's backend codes (wasm_bindings/js/checks.js).
export const REQUEST_ALIASES = BACKEND_ALIASES;
export const backendOfRequest = (requested) => REQUEST_ALIASES[requested] ?? requested;
// The CPU kernel of a loop that runs in the core whatever the request (a decoder's writing, Marian's
// generate()): scalar when it is asked for or the module has no SIMD128 (its cpuBackends), else SIMD128.
export const cpuKernel = (requested,
  cpuBackends = ['scalar', 'simd128']) => (requested === 'scalar' || !cpuBackends.includes('simd128') ? 'scalar' : 'simd128');
