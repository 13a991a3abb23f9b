// The bounded history a run keeps (web/training/bounded_history.js): however many steps and snapshots
// arrive, the timeline holds at most its count and bytes, spans the whole run (first and newest kept),
// and the curves keep their span at a coarser resolution with exact means.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StepSeries, ThinningList, typedArrayBytes } from '../../web/training/bounded_history.js';

test('ThinningList[maxCount=512]: 100,000 snapshots -> at most 512, the first and the newest kept, steps in order', () => {
  const list = new ThinningList({ maxCount: 512 });
  for (let step = 0; step < 100000; step += 5) list.push({ step });
  assert.ok(list.length <= 512 && list.length > 256, `${list.length} kept`);
  assert.equal(list.at(0).step, 0);
  assert.equal(list.at(-1).step, 99995);
  for (let i = 1; i < list.length; i++) assert.ok(list.at(i).step > list.at(i - 1).step);
});

test('ThinningList[maxBytes=64 MiB]: 16 heads x 64 x 64 snapshots (262 KB each) stay under 64 MiB', () => {
  const list = new ThinningList({ maxCount: 512, maxBytes: 64 * 1024 * 1024, sizeOf: typedArrayBytes });
  const one = () => ({ step: 0, weights: new Float32Array(16 * 64 * 64), weightsMean: new Float32Array(64 * 64), predictions: new Int32Array(64) });
  assert.equal(typedArrayBytes(one()), (16 * 64 * 64 + 64 * 64 + 64) * 4);
  for (let i = 0; i < 2000; i++) {
    list.push({ ...one(), step: 5 * i });
    assert.ok(list.bytes <= 64 * 1024 * 1024, `${list.bytes} bytes after ${i + 1}`);
  }
  assert.equal(list.bytes, list.length * typedArrayBytes(one()));
  assert.equal(list.at(-1).step, 5 * 1999);
});

test('StepSeries[maxPoints=8]: pairs become their means, the span is kept, every doubles', () => {
  const s = new StepSeries({ maxPoints: 8 });
  s.push(...Array.from({ length: 8 }, (_, i) => i + 1)); // 1..8
  assert.deepEqual(Array.from(s.ys), [1, 2, 3, 4, 5, 6, 7, 8]);
  s.push(9); // full: 8 points of 1 step -> 4 of 2, then the new step starts a partial point
  assert.equal(s.every, 2);
  assert.deepEqual(Array.from(s.ys), [1.5, 3.5, 5.5, 7.5]);
  s.push(10);
  assert.deepEqual(Array.from(s.ys), [1.5, 3.5, 5.5, 7.5, 9.5]);
  assert.equal(s.steps, 10);
});

test('StepSeries[maxPoints=8192]: 1,000,000 steps keep <= 8192 points and the mean of the whole run', () => {
  const s = new StepSeries({ maxPoints: 8192 });
  for (let i = 0; i < 1_000_000; i++) s.push(i % 2); // alternating 0, 1: every mean is 0.5
  assert.ok(s.length <= 8192 && s.length >= 4096);
  assert.ok(s.ys.every((v) => v === 0.5));
  assert.equal(s.length * s.every, Math.floor(1_000_000 / s.every) * s.every);
  assert.ok(s.length * s.every > 1_000_000 - s.every * 2, 'the points span the whole run');
});

test('bad budgets are refused with the reason', () => {
  assert.throws(() => new ThinningList({ maxCount: 1 }), /maxCount must be at least 2/);
  assert.throws(() => new StepSeries({ maxPoints: 7 }), /maxPoints must be an even number >= 2/);
});
