// The argument checks and the error every part of the JS API throws: a raw call that returns a message
// becomes a thrown AttnLabError (the instance keeps working).

export class AttnLabError extends Error {
  constructor(message) {
    super(message);
    this.name = 'AttnLabError';
  }
}

export function check(message) {
  if (message) throw new AttnLabError(message);
}

export function checkSeed(seed) {
  if (seed === undefined) return 0;
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
    throw new AttnLabError(`seed must be an integer in [0, 4294967295], got ${seed}`);
  }
  return seed;
}

export function checkInteger(name, value, { min = -Infinity } = {}) {
  if (!Number.isInteger(value)) throw new AttnLabError(`${name} must be an integer, got ${value}`);
  if (value < min) throw new AttnLabError(`${name} must be at least ${min}, got ${value}`);
  return value;
}

// What a request may call a backend besides its enum name: `simd` is the settings' and the CLI's short
// name for simd128. The one alias: the page's rules read it from here (web/backends.js).
export const BACKEND_ALIASES = { simd: 'simd128' };
// core/backend.h's enum, by name, and by alias.
const ENUM_CODES = { scalar: 0, simd128: 1, webgpu: 2 };
export const BACKEND_CODES = {
  ...ENUM_CODES,
  ...Object.fromEntries(Object.entries(BACKEND_ALIASES).map(([alias, name]) => [alias, ENUM_CODES[name]])),
};

export function backendCode(backend) {
  if (backend === undefined) return BACKEND_CODES.simd128;
  const code = BACKEND_CODES[backend];
  if (code === undefined) {
    throw new AttnLabError(`backend must be one of scalar, simd128, webgpu, got '${backend}'`);
  }
  return code;
}
