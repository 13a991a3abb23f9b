// One trainer interface, bound once (issue 10 A): lab.createTrainer / lab.trainerIds over the generic
// raw class give the labs' own classes, the same bits as `new AlignmentTrainer` / `new LookupTrainer`,
// and clear messages for an unknown id or missing assets.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../../web/node_loader.mjs';
import { DIGITS_ASSET, loadDigits } from '../../web/data/digits.js';
import { lab } from './support.mjs';
import { KernelRunner } from '../../web/training/kernel_runner.js';

const m = await lab('simd');

test('trainerIds: the registry\'s ids, in the labs\' order', () => {
  assert.deepEqual(m.trainerIds(), ['alignment', 'lookup', 'count', 'induction']);
});

test('createTrainer(alignment): an AlignmentTrainer with the same losses, bit for bit, as new AlignmentTrainer', () => {
  const config = { task: 'reverse', seed: 5, batch: 16 };
  const a = m.createTrainer('alignment', config);
  const b = new m.AlignmentTrainer(config);
  assert.ok(a instanceof m.AlignmentTrainer && a instanceof m.Trainer);
  assert.deepEqual(a.train(5, { backend: 'simd128' }), b.train(5, { backend: 'simd128' }));
  assert.deepEqual(a.config, b.config);
  assert.deepEqual(a.parameters(), b.parameters());
  assert.equal(a.epoch, 0);
  assert.deepEqual(a.data('fixedSample'), b.fixedSample());
  assert.deepEqual(m.Trainer.defaults('alignment', 'reverse'), m.AlignmentTrainer.defaults('reverse'));
  a.delete();
  b.delete();
});

test('createTrainer: an unknown id, and a lookup without digits, get clear messages', () => {
  assert.throws(() => m.createTrainer('sort', {}), { name: 'AttnLabError', message: "unknown trainer 'sort': the trainers are alignment, lookup, count, induction" });
  assert.throws(() => new m.Trainer('sort', {}), /unknown trainer 'sort'/);
  assert.throws(() => m.Trainer.defaults('sort'), /unknown trainer 'sort'/);
  assert.throws(() => m.createTrainer('lookup', {}), /LookupTrainer needs the digits/);
  assert.throws(() => new m.Trainer('lookup', {}), /load the digit asset first/);
});

test('records: results keep their types (typed arrays, plain arrays), inputs keep their messages', () => {
  const t = m.createTrainer('alignment', { task: 'copy', batch: 8 });
  const r = t.inspect({ tokens: new Int32Array([1, 2, 3]) });
  assert.ok(r.weights instanceof Float32Array && r.predictions instanceof Int32Array && r.confidence instanceof Float32Array);
  assert.equal(r.weights.length, 4 * 3 * 3);
  assert.ok(Array.isArray(t.evaluate(64).headMass));
  assert.throws(() => t.inspect({ tokens: new Map() }), { message: 'tokens must be a Float32Array (or an array of numbers), got Map' });
  assert.throws(() => t.inspect({ tokens: [1, NaN] }), { message: 'tokens[1] must be a whole number in [-2147483648, 2147483647], got nan' });
  assert.throws(() => new m.AlignmentTrainer({ dModel: () => 1 }), { message: 'dModel must be an integer' });
  assert.throws(() => new m.AlignmentTrainer({ lr: Infinity }), { message: 'lr must be a finite number' });
  t.delete();
});

test('createTrainer(lookup, config, {digits}): a LookupTrainer with the same losses as new LookupTrainer', async () => {
  const digits = await loadDigits(m, readFileSync(path.join(REPO_ROOT, 'public', DIGITS_ASSET)));
  const a = m.createTrainer('lookup', { seed: 1, batch: 16 }, { digits });
  const b = new m.LookupTrainer({ seed: 1, batch: 16 }, digits);
  assert.ok(a instanceof m.LookupTrainer);
  assert.deepEqual(a.train(3), b.train(3));
  assert.equal(a.epoch, 1);
  let readWeights = null;
  const runner = new KernelRunner({ module: m, request: { requested: 'simd' } });
  await a.stepWith({ forward: (args) => { readWeights = args.readWeights; return runner.forward(args, { call: 'step' }); },
    backward: (args) => runner.backward(args, { call: 'step' }) });
  assert.equal(readWeights, true, 'the Lookup lab\'s loss reads the attention weights');
  const images = a.images('database');
  assert.ok(images.pixels instanceof Uint8Array && images.pixels.length === 100 * 784);
  a.delete();
  b.delete();
  digits.delete();
});
