// web/io/printed_tensor.js: a tensor pasted from a notebook (PyTorch's print, NumPy's, a Python list) is
// read as printed, and anything else gets a PrintedTensorError that names the problem, never another
// exception: checked on the hard cases and on 3,000 mutated prints (a seeded fuzz).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { FIXTURES } from './support.mjs';
import { parsePrintedTensors, PrintedTensorError, MAX_NUMBERS } from '../../web/io/printed_tensor.js';

const printed = JSON.parse(readFileSync(path.join(FIXTURES, 'build_steps', 'printed.json'), 'utf8'));
const one = (text) => {
  const [t, ...rest] = parsePrintedTensors(text);
  assert.equal(rest.length, 0);
  return { shape: t.shape, data: Array.from(t.data) };
};

test('PyTorch\'s, NumPy\'s and Python\'s prints read as printed', () => {
  assert.deepEqual(one('tensor([[ 0.1234, -0.5000],\n        [ 1.0000e-04,  2.]], grad_fn=<AddmmBackward0>)'),
    { shape: [2, 2], data: [0.1234, -0.5, 1e-4, 2] });
  assert.deepEqual(one('tensor([[1.],\n        [0.]], dtype=torch.float64, requires_grad=True)'), { shape: [2, 1], data: [1, 0] });
  assert.deepEqual(one('[[ 0.1  -0.25]\n [ 3.   nan]]'), { shape: [2, 2], data: [0.1, -0.25, 3, NaN] });
  assert.deepEqual(one('[[1, 2, 3]]'), { shape: [1, 3], data: [1, 2, 3] });
  assert.deepEqual(one('tensor(0.5000, grad_fn=<MeanBackward0>)'), { shape: [], data: [0.5] });
  assert.deepEqual(one('tensor([inf, -inf, 3])'), { shape: [3], data: [Infinity, -Infinity, 3] });
  assert.deepEqual(one('array([[1.5, 2.5]], dtype=float32)'), { shape: [1, 2], data: [1.5, 2.5] });
  const both = parsePrintedTensors(`${printed['batch.x']} ${printed['batch.y']}`);
  assert.deepEqual(both.map((t) => t.shape), [[4, 10], [4, 1]]);
  assert.deepEqual(one(printed.attention).shape, [4, 1, 10]);
});

test('what is not a tensor is refused with the reason', () => {
  const refused = (text, pattern) => assert.throws(() => parsePrintedTensors(text), (e) => e instanceof PrintedTensorError && pattern.test(e.message), text);
  refused('tensor([[0.1, ..., 0.3]])', /the print is abbreviated \("\.\.\."\).*torch\.set_printoptions\(profile="full"\)/);
  refused('tensor([[0.1, 0.2], [0.3]])', /^row \[1\] has shape \(1\), row \[0\] has \(2\): the rows of a tensor have one length$/);
  refused('tensor([[0.1, 0.2], 0.3])', /^row \[1\] has shape \(\), row \[0\] has \(2\)/);
  refused('tensor([[0.1, abc]])', /^"abc" at character 15 is not a number$/);
  refused('tensor([[0.1, 0.2]', /^a "\[" at character 8 is never closed$/);
  refused('hello', /^no tensor found: paste what print\(t\) showed/);
  refused('', /^no tensor found/);
  refused('['.repeat(40) + ']'.repeat(40), /more than 16 nested brackets/);
  refused(`[${'1,'.repeat(MAX_NUMBERS + 1)}]`, new RegExp(`more than ${MAX_NUMBERS} numbers were pasted`));
  assert.throws(() => parsePrintedTensors(42), PrintedTensorError);
});

// Two inputs that once never finished (issue 35): "]tensor()" was read from character 0 again and again
// (an empty tensor pushed each time until the heap ran out), and the shape check of a nest cost 3^depth.
// Each input is small, so the fixed parser answers in milliseconds; the timeout only turns a relapse into
// a failure instead of a hung suite.
test('"]tensor()" and "]array( )" are refused, not read forever', { timeout: 20_000 }, () => {
  const refused = (text, pattern) => assert.throws(() => parsePrintedTensors(text), (e) => e instanceof PrintedTensorError && pattern.test(e.message), text);
  refused(']tensor()', /^"tensor\(\)" at character 2 holds no numbers$/);
  refused(']array( )', /^"array\( \)" at character 2 holds no numbers$/);
  refused('tensor(, [1])', /^"tensor\(, \[1\]\)" at character 1 holds no numbers$/);
  assert.deepEqual(one('tensor( [1, 2])'), { shape: [2], data: [1, 2] });
  assert.deepEqual(one('tensor(\n  3.)'), { shape: [], data: [3] });
});

test('a 16-deep nest two wide is read in one pass over its 65,536 numbers', { timeout: 20_000 }, () => {
  const nest = (depth) => (depth === 0 ? '1' : `[${nest(depth - 1)}, ${nest(depth - 1)}]`);
  const t = one(nest(16));
  assert.deepEqual(t.shape, new Array(16).fill(2));
  assert.equal(t.data.length, 65536);
  // One row deep inside the nest is short: named by its whole index.
  const bad = nest(16).replace(/\[1, 1\]\]*$/, (m) => `[1]${m.slice(6)}`);
  assert.throws(() => parsePrintedTensors(bad), (e) => e instanceof PrintedTensorError && /^row \[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1\] has shape \(1\), row \[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0\] has \(2\)/.test(e.message));
});

test('fuzz: 3,000 mutated prints give a tensor or a PrintedTensorError', () => {
  let seed = 12345;
  const random = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
  // The prints of the fixtures, and the two inputs that once never finished (see above).
  const seeds = [...Object.values(printed), ']tensor()', ']array( )', `${'[1, '.repeat(16)}2${']'.repeat(16)}`];
  const alphabet = '[](),. -+e0123456789naif\n\ttensor';
  let parsed = 0, refused = 0;
  for (let i = 0; i < 3000; i++) {
    let text = seeds[Math.floor(random() * seeds.length)];
    const edits = 1 + Math.floor(random() * 6);
    for (let e = 0; e < edits; e++) {
      const at = Math.floor(random() * (text.length + 1));
      const kind = random();
      if (kind < 0.4) text = text.slice(0, at) + text.slice(at + 1 + Math.floor(random() * 4)); // delete
      else if (kind < 0.8) text = text.slice(0, at) + alphabet[Math.floor(random() * alphabet.length)] + text.slice(at); // insert
      else text = text.slice(0, at) + text.slice(at, at + 20).repeat(2) + text.slice(at + 20); // duplicate
    }
    try {
      const tensors = parsePrintedTensors(text);
      for (const t of tensors) assert.equal(t.data.length, t.shape.reduce((a, b) => a * b, 1));
      parsed++;
    } catch (error) {
      assert.ok(error instanceof PrintedTensorError, `input ${JSON.stringify(text)} threw ${error}`);
      refused++;
    }
  }
  assert.ok(parsed > 100 && refused > 100, `both outcomes occur: ${parsed} parsed, ${refused} refused`);
});
