// PyTorch state_dicts in and out of a lab's model, through safetensors. Generic: any model object with
// parameterNames(), parameterShape(name) and setParameter(name, values) (every layer and trainer of the
// WASM module) plugs in. Mismatched keys or shapes are all listed in one message.
import { parseSafetensors, writeSafetensors } from './safetensors.js';

export class StateDictError extends Error {
  constructor(message, problems) {
    super(message);
    this.name = 'StateDictError';
    this.problems = problems;
  }
}

const shapeText = (shape) => `[${shape.join(', ')}]`;
const sameShape = (a, b) => a.length === b.length && a.every((d, i) => d === b[i]);

/** {missing, unexpected, wrongShape: [{name, expected, got}], wrongType: [{name, dtype}]} */
export function compareStateDict(model, tensors) {
  const expected = new Map(model.parameterNames().map((name) => [name, [...model.parameterShape(name)]]));
  const problems = { missing: [], unexpected: [], wrongShape: [], wrongType: [] };
  for (const [name, shape] of expected) {
    const t = tensors[name];
    if (!t) problems.missing.push(name);
    else if (!sameShape(shape, t.shape)) problems.wrongShape.push({ name, expected: shape, got: t.shape });
    else if (t.dtype && !['F32', 'F64'].includes(t.dtype)) problems.wrongType.push({ name, dtype: t.dtype });
  }
  for (const name of Object.keys(tensors)) if (!expected.has(name)) problems.unexpected.push(name);
  return problems;
}

export function describeProblems(problems) {
  const lines = [];
  if (problems.missing.length) lines.push(`missing keys: ${problems.missing.join(', ')}`);
  if (problems.unexpected.length) lines.push(`unexpected keys: ${problems.unexpected.join(', ')}`);
  for (const { name, expected, got } of problems.wrongShape) {
    lines.push(`${name}: the model needs shape ${shapeText(expected)}, the file has ${shapeText(got)}`);
  }
  for (const { name, dtype } of problems.wrongType) lines.push(`${name}: dtype ${dtype}, expected a float tensor`);
  return lines;
}

/** Loads every tensor into the model, or throws a StateDictError listing every mismatch. */
export function loadStateDict(model, tensors) {
  const problems = compareStateDict(model, tensors);
  const lines = describeProblems(problems);
  if (lines.length) throw new StateDictError(`the weights do not fit this model:\n- ${lines.join('\n- ')}`, problems);
  for (const name of model.parameterNames()) {
    const data = tensors[name].data;
    model.setParameter(name, data instanceof Float32Array ? data : Float32Array.from(data));
  }
}

/** The model's parameters as {name: {shape, data}}: PyTorch's names, shapes and order. */
export function stateDictOf(model) {
  const tensors = {};
  for (const name of model.parameterNames()) {
    tensors[name] = { shape: [...model.parameterShape(name)], data: model.raw._parameter(name).slice() };
  }
  return tensors;
}

/** The model's parameters as safetensors bytes (F32), PyTorch's names and shapes. */
export function saveStateDict(model, metadata = {}) {
  return stateDictBytes(stateDictOf(model), metadata);
}

/**
 * tensors ({name: {shape, data}}, e.g. the worker's `weights` answer) -> safetensors bytes with
 * PyTorch's format tag and the metadata as strings (safetensors metadata holds only strings).
 */
export function stateDictBytes(tensors, metadata = {}) {
  const text = Object.fromEntries(Object.entries(metadata).map(([k, v]) => [k, String(v)]));
  return writeSafetensors(tensors, { format: 'pt', ...text });
}

export { parseSafetensors };
