// Notebook 02's model as a student saves it (tests/fixtures/make_notebook_lookup_fixture.py: AttentionTest
// trained briefly in PyTorch on the Lookup lab's own digits of seed 0, torch.save'd): `attnlab evaluate`
// gives PyTorch's own top-1, top-10 and retrieval MSE on the lab's 2,000 held-out queries, and the lab's
// inspection of held-out queries 0..7 gives PyTorch's weights and retrievals.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { FIXTURES, fixture, lab } from './support.mjs';
import { REPO_ROOT } from '../../web/node_loader.mjs';
import { DIGITS_ASSET, loadDigits } from '../../web/data/digits.js';
import { readWeightsFile } from '../../web/io/weights_file.js';

const MODEL = path.join(FIXTURES, 'notebook_lookup_model.pt');
const want = fixture('notebook_lookup_expected.safetensors');
const tolerance = (name) => Math.max(1e-5, 2 * want[`err/${name}`].data[0]);

test('attnlab evaluate --lab lookup on the notebook\'s .pt: PyTorch\'s top-1, top-10 and MSE on the lab\'s held-out queries', () => {
  const r = spawnSync(process.execPath, [path.join(REPO_ROOT, 'web', 'cli', 'attnlab.mjs'), 'evaluate', '--lab', 'lookup', '--weights', MODEL, '--json'],
    { encoding: 'utf8', cwd: REPO_ROOT });
  assert.equal(r.status, 0, r.stderr);
  const e = JSON.parse(r.stdout);
  assert.equal(e.queries, 2000);
  // A count out of 2,000: the same argmax on every query gives the same fraction exactly.
  assert.equal(Math.round(e.top1 * 2000), Math.round(want.top1.data[0] * 2000));
  assert.equal(Math.round(e.top10 * 20000), Math.round(want.top10.data[0] * 20000));
  assert.ok(Math.abs(e.mse - want.mse.data[0]) <= tolerance('mse'), `mse ${e.mse} vs ${want.mse.data[0]}`);
  assert.ok(Math.abs(e.meanImageMse - want.mean_image_mse.data[0]) <= tolerance('mean_image_mse'));
});

test('the lab\'s inspection of held-out queries 0..7 with the notebook\'s model: PyTorch\'s weights and retrievals', async () => {
  const module = await lab('simd');
  const digits = await loadDigits(module, readFileSync(path.join(REPO_ROOT, 'public', DIGITS_ASSET)));
  const trainer = new module.LookupTrainer({ seed: 0 }, digits);
  const { tensors } = readWeightsFile(module, new Uint8Array(readFileSync(MODEL)), 'notebook_lookup_model.pt');
  for (const [name, t] of Object.entries(tensors)) trainer.setParameter(name, t.data);
  for (let q = 0; q < 8; q++) {
    const r = trainer.inspect({ heldOut: q }, { backend: 'simd128' });
    const w = want.weights.data.subarray(q * 100, (q + 1) * 100), out = want.retrieval.data.subarray(q * 784, (q + 1) * 784);
    let worstW = 0, worstR = 0;
    for (let i = 0; i < 100; i++) worstW = Math.max(worstW, Math.abs(r.weightsMean[i] - w[i]));
    for (let i = 0; i < 784; i++) worstR = Math.max(worstR, Math.abs(r.retrieval[i] - out[i]));
    assert.ok(worstW <= tolerance('weights'), `query ${q}: weights differ by ${worstW}`);
    assert.ok(worstR <= tolerance('retrieval'), `query ${q}: retrieval differs by ${worstR}`);
  }
  trainer.delete();
  digits.delete();
});
