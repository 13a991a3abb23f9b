// PyTorch state_dicts in and out of a lab's model, through safetensors. Generic: any model object with
// parameterNames(), parameterShape(name), setParameter(name, values) and raw._parameter(name) (every
// layer and trainer of the WASM module) plugs in. Every mismatch is listed in one message, and a
// state_dict that does not fit changes nothing: all of it is checked before any of it is applied.
import { parseSafetensors, writeSafetensors } from './safetensors.js';

export class StateDictError extends Error {
  constructor(message, problems, options) {
    super(message, options);
    this.name = 'StateDictError';
    this.problems = problems;
  }
}

const shapeText = (shape) => (Array.isArray(shape) ? `[${shape.join(', ')}]` : String(shape));
const sameShape = (a, b) => a.length === b.length && a.every((d, i) => d === b[i]);

const numel = (shape) => shape.reduce((a, b) => a * b, 1);

/**
 * The values setParameter would get, as Float32Array: what a float64 file holds becomes float32 here,
 * so a value beyond float32's range shows up as the Infinity the model would have received.
 */
const asFloat32 = (data) => (data instanceof Float32Array ? data : Float32Array.from(data));

/**
 * {missing, unexpected, wrongShape: [{name, expected, got}], wrongType: [{name, dtype}],
 *  wrongLength: [{name, shape, got}], notFinite: [{name, index, value}]}: everything setParameter
 * would refuse, found before any of it is called. Own keys only (Object.hasOwn): a parameter named
 * "constructor" is not found on a plain object's prototype.
 */
export function compareStateDict(model, tensors) {
  const expected = new Map(model.parameterNames().map((name) => [name, [...model.parameterShape(name)]]));
  const problems = { missing: [], unexpected: [], wrongShape: [], wrongType: [], wrongLength: [], notFinite: [] };
  for (const [name, shape] of expected) {
    const t = Object.hasOwn(tensors, name) ? tensors[name] : undefined;
    if (!t) {
      problems.missing.push(name);
    } else if (!Array.isArray(t.shape) || !sameShape(shape, t.shape)) {
      problems.wrongShape.push({ name, expected: shape, got: t.shape });
    } else if (t.dtype && !['F32', 'F64'].includes(t.dtype)) {
      problems.wrongType.push({ name, dtype: t.dtype });
    } else if (t.data?.length !== numel(shape)) {
      problems.wrongLength.push({ name, shape, got: t.data?.length ?? 0 });
    } else {
      const values = asFloat32(t.data);
      const index = values.findIndex((v) => !Number.isFinite(v));
      if (index >= 0) problems.notFinite.push({ name, index, value: values[index] });
    }
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
  for (const { name, shape, got } of problems.wrongLength ?? []) {
    lines.push(`${name}: ${got} values, the shape ${shapeText(shape)} needs ${numel(shape)}`);
  }
  for (const { name, index, value } of problems.notFinite ?? []) {
    lines.push(`${name}: value ${index} is ${value}, expected a finite number`);
  }
  return lines;
}

/**
 * Loads every tensor into the model, or throws a StateDictError and leaves the model bit-identical to
 * before: every check runs before the first setParameter, and should a setParameter fail anyway (what
 * no check here foresaw), the parameters already set are put back from a copy taken first.
 */
export function loadStateDict(model, tensors) {
  const problems = compareStateDict(model, tensors);
  const lines = describeProblems(problems);
  if (lines.length) throw new StateDictError(`the weights do not fit this model:\n- ${lines.join('\n- ')}`, problems);
  const names = model.parameterNames();
  const values = names.map((name) => asFloat32(tensors[name].data));
  const before = names.map((name) => model.raw._parameter(name).slice());
  let applied = 0;
  try {
    for (; applied < names.length; applied++) model.setParameter(names[applied], values[applied]);
  } catch (error) {
    // Put back what was set. This can only fail where the model refuses its own values (a run that
    // diverged to NaN): then the message says so rather than promise what did not happen.
    const unrestored = [];
    for (let i = 0; i < applied; i++) {
      try {
        model.setParameter(names[i], before[i]);
      } catch {
        unrestored.push(names[i]);
      }
    }
    const outcome = unrestored.length ? `and ${unrestored.join(', ')} could not be restored` : 'and the model was restored';
    throw new StateDictError(`the weights could not be loaded (${names[applied]}), ${outcome}: ${error.message}`,
      problems, { cause: error });
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
