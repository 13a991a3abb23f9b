// The fixed tensors of the builds (inputs and weights), each made by one short Python expression that
// PyTorch and JS compute to the same float32 bits: integers from torch.arange, a remainder, a shift, and
// a division by a power of two (exact). So a student types one line, not a wall of numbers, and the
// lab's reference starts from exactly the notebook's tensor.

/**
 * ((torch.arange(n) * mul % mod - shift) / scale).reshape(shape) -> {shape, data (Float64Array), python}.
 * scale must be a power of two (the division is then exact in float32).
 */
export function pattern(shape, { mul, mod, shift = 0, scale = 1 }) {
  if (!Number.isInteger(Math.log2(scale))) throw new Error(`pattern: scale ${scale} is not a power of two`);
  const n = shape.reduce((a, b) => a * b, 1);
  const data = new Float64Array(n);
  for (let i = 0; i < n; i++) data[i] = (((i * mul) % mod) - shift) / scale;
  const shifted = shift ? ` - ${shift}` : '';
  const python = `((torch.arange(${n}) * ${mul} % ${mod}${shifted}) / ${scale}).reshape(${shape.join(', ')})`;
  // How it was made, so a student's own input can be drawn the same way (student_input.js).
  return { shape, data, python, made: { mul, mod, shift, scale } };
}

/** Integer ids (torch.long): (torch.arange(n) * mul % mod + offset).reshape(shape). */
export function idPattern(shape, { mul, mod, offset = 0 }) {
  const n = shape.reduce((a, b) => a * b, 1);
  const data = new Float64Array(n);
  for (let i = 0; i < n; i++) data[i] = ((i * mul) % mod) + offset;
  const plus = offset ? ` + ${offset}` : '';
  return { shape, data, integer: true, python: `(torch.arange(${n}) * ${mul} % `
    + `${mod}${plus}).reshape(${shape.join(', ')})` };
}

/** A literal tensor (small integer inputs, as a notebook would type them). */
export function literal(nested, { integer = false } = {}) {
  const shape = [];
  for (let v = nested; Array.isArray(v); v = v[0]) shape.push(v.length);
  const data = Float64Array.from(nested.flat(Infinity));
  return { shape, data, integer, python: `torch.tensor(${JSON.stringify(nested).replace(/,/g, ', ')})` };
}

/** The causal mask of T positions: 1 on and below the diagonal (torch.tril(torch.ones(T, T))). */
export function causalMask(T) {
  const data = new Float64Array(T * T);
  for (let t = 0; t < T; t++) for (let s = 0; s <= t; s++) data[t * T + s] = 1;
  return { shape: [T, T], data, python: `torch.tril(torch.ones(${T}, ${T}))` };
}

/** flat data of `shape` -> nested arrays (the JSON records' tensors). */
export function nestedList(data, shape) {
  let at = 0;
  const nest = (depth) => (depth === shape.length ? data[at++] : Array.from({ length: shape[depth] },
    () => nest(depth + 1)));
  return nest(0);
}
