// The Induction lab's default prompt pair for its Circuits section (web/labs/08_induction_circuits.js's
// repeatPairIds): cut from the probe sequence three tokens into its repeat, so that its next token is
// one only the earlier copy tells; the corrupted twin puts, in that token's first place, the first token
// after it that the clean prompt does not hold. The page's figures of the pair are checked against
// PyTorch in tests/browser/induction_circuits.test.mjs; here, the cut itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { repeatPairIds } from '../../web/labs/08_induction_circuits.js';

test('the repeated pair: three tokens into the repeat, the answer the segment\'s next, the wrong one unused', () => {
  // start, segment 5 6 7 8 at 1..4, copied at 5.
  const sample = { tokens: Int32Array.from([0, 5, 6, 7, 8, 5, 6, 7, 8]), copyStart: 5, segment: 4 };
  assert.deepEqual(repeatPairIds(sample, 10), { clean: [0, 5, 6, 7, 8, 5, 6, 7], corrupt: [0, 5, 6, 7, 9, 5, 6, 7],
    answer: 8, wrong: 9 });
  // The wrong token cycles past V - 1 back to 1, and skips the tokens the prompt holds.
  assert.deepEqual(repeatPairIds(sample, 9), { clean: [0, 5, 6, 7, 8, 5, 6, 7], corrupt: [0, 5, 6, 7, 1, 5, 6, 7],
    answer: 8, wrong: 1 });
});

test('a segment of two: one token into the repeat; no pair without a segment or a token to spare', () => {
  const two = { tokens: [0, 3, 4, 3, 4], copyStart: 3, segment: 2 };
  assert.deepEqual(repeatPairIds(two, 6), { clean: [0, 3, 4, 3], corrupt: [0, 3, 5, 3], answer: 4, wrong: 5 });
  assert.equal(repeatPairIds({ tokens: [0, 3, 3], copyStart: 2, segment: 1 }, 6), null);
  assert.equal(repeatPairIds({ tokens: [0, 1, 2, 1, 2], copyStart: 3, segment: 2 }, 3), null, 'every token is used');
});
