// web/io/state_dict.js's promise that a file which does not fit changes nothing, on a fake model with
// the parameter API of the WASM module's layers and trainers (wasm_bindings/attnlab.js): no WASM needed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadStateDict, stateDictOf, StateDictError } from '../../web/io/state_dict.js';
import { parseSafetensors, writeSafetensors } from '../../web/io/safetensors.js';

/**
 * parameterNames(), parameterShape(name), setParameter(name, values) and raw._parameter(name), as the
 * WASM layers have them; setParameter checks what RawLayer::_set_parameter checks (known name, length,
 * finite values) and throws like it. `failOn` makes the n-th setParameter call throw anyway, for what
 * no check can foresee.
 */
class FakeModel {
  constructor(shapes, { failOn = -1 } = {}) {
    this.shapes = new Map(Object.entries(shapes));
    this.values = new Map();
    let seed = 1;
    for (const [name, shape] of this.shapes) {
      this.values.set(name, Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => (seed++ * 0.37) % 1 - 0.5));
    }
    this.calls = 0;
    this.failOn = failOn;
    this.raw = { _parameter: (name) => this.values.get(name) };
  }
  parameterNames() { return [...this.shapes.keys()]; }
  parameterShape(name) { return [...this.shapes.get(name)]; }
  setParameter(name, values) {
    if (this.calls++ === this.failOn) throw new Error('setParameter failed (injected)');
    const target = this.values.get(name);
    if (!target) throw new Error(`unknown parameter '${name}'`);
    if (values.length !== target.length) throw new Error(`${name} has ${values.length} values, expected ${target.length}`);
    if (!values.every(Number.isFinite)) throw new Error(`${name} has a value that is not finite`);
    target.set(values);
  }
  /** Every parameter's bytes, to compare bit for bit. */
  bits() {
    return Object.fromEntries([...this.values].map(([name, v]) => [name, [...new Uint32Array(v.slice().buffer)]]));
  }
}

const SHAPES = { 'lin.weight': [2, 3], 'lin.bias': [2] };
const good = () => ({
  'lin.weight': { dtype: 'F32', shape: [2, 3], data: Float32Array.of(1, 2, 3, 4, 5, 6) },
  'lin.bias': { dtype: 'F32', shape: [2], data: Float32Array.of(7, 8) },
});

function assertUnchanged(model, run, pattern) {
  const before = model.bits();
  assert.throws(run, (e) => {
    assert.ok(e instanceof StateDictError, `expected a StateDictError, got ${e?.constructor?.name}: ${e?.message}`);
    if (pattern) assert.match(e.message, pattern);
    return true;
  });
  assert.deepEqual(model.bits(), before, 'the model is bit-identical to before');
}

test('a file that fits loads every parameter', () => {
  const model = new FakeModel(SHAPES);
  loadStateDict(model, good());
  assert.deepEqual([...model.values.get('lin.weight')], [1, 2, 3, 4, 5, 6]);
  assert.deepEqual([...model.values.get('lin.bias')], [7, 8]);
  assert.deepEqual(stateDictOf(model)['lin.bias'], { shape: [2], data: Float32Array.of(7, 8) });
});

test('a NaN in the last tensor (lin.bias[1]) is listed and changes nothing, not even lin.weight', () => {
  const model = new FakeModel(SHAPES);
  const tensors = good();
  tensors['lin.bias'].data = Float32Array.of(7, NaN);
  assertUnchanged(model, () => loadStateDict(model, tensors), /- lin\.bias: value 1 is NaN, expected a finite number/);
});

test('an F64 value beyond float32 (1e39 -> Infinity) is listed and changes nothing', () => {
  const model = new FakeModel(SHAPES);
  const tensors = good();
  tensors['lin.bias'] = { dtype: 'F64', shape: [2], data: Float64Array.of(1e39, 0) };
  assertUnchanged(model, () => loadStateDict(model, tensors), /- lin\.bias: value 0 is Infinity, expected a finite number/);
});

test('data of the wrong length (5 values for shape [2, 3]) is listed and changes nothing', () => {
  const model = new FakeModel(SHAPES);
  const tensors = good();
  tensors['lin.weight'].data = Float32Array.of(1, 2, 3, 4, 5);
  assertUnchanged(model, () => loadStateDict(model, tensors), /- lin\.weight: 5 values, the shape \[2, 3\] needs 6/);
});

for (const failOn of [0, 1]) {
  test(`setParameter failing on call ${failOn} (past every check) rolls back: the model is bit-identical`, () => {
    const model = new FakeModel(SHAPES, { failOn });
    assertUnchanged(model, () => loadStateDict(model, good()), /the weights could not be loaded \(lin\.(weight|bias)\), and the model was restored: setParameter failed \(injected\)/);
  });
}

test('a parameter named "constructor" missing from the file is reported missing (no prototype lookup)', () => {
  const model = new FakeModel({ constructor: [1], toString: [1] });
  assertUnchanged(model, () => loadStateDict(model, {}), /- missing keys: constructor, toString/);
});

test('a tensor named "__proto__" from a file is an unexpected key, listed by name', () => {
  const model = new FakeModel(SHAPES);
  const { tensors } = parseSafetensors(writeSafetensors({ ...good(), ['__proto__']: { shape: [1], data: [0] } }));
  assertUnchanged(model, () => loadStateDict(model, tensors), /- unexpected keys: __proto__/);
});

test('every problem is listed in one message, in a fixed order', () => {
  const model = new FakeModel({ a: [2], b: [2], c: [1], d: [1], e: [2] });
  const tensors = {
    b: { dtype: 'F32', shape: [3], data: new Float32Array(3) },
    c: { dtype: 'I32', shape: [1], data: Int32Array.of(1) },
    d: { dtype: 'F32', shape: [1], data: Float32Array.of(-Infinity) },
    e: { dtype: 'F32', shape: [2], data: Float32Array.of(1) },
    z: { dtype: 'F32', shape: [1], data: new Float32Array(1) },
  };
  assertUnchanged(model, () => loadStateDict(model, tensors), new RegExp([
    '^the weights do not fit this model:',
    '- missing keys: a',
    '- unexpected keys: z',
    '- b: the model needs shape \\[2\\], the file has \\[3\\]',
    '- c: dtype I32, expected a float tensor',
    '- e: 1 values, the shape \\[2\\] needs 2',
    '- d: value 0 is -Infinity, expected a finite number$',
  ].join('\n')));
});
