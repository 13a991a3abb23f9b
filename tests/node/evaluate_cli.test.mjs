// `attnlab evaluate --lab LAB --weights FILE` (issue 28: an instructor grading a class's notebook
// models): the course notebooks' models as the notebooks save them, torch.save(model.state_dict()) (.pt,
// tests/fixtures/make_notebook_pt_fixtures.py), give the same figures as the same tensors in a
// .safetensors; the record names the file; a model of another lab is refused by name and shape; a file
// that is not a weights file says so. train --load takes a .pt too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FIXTURES, lab } from './support.mjs';
import { REPO_ROOT } from '../../web/node_loader.mjs';
import { readWeightsFile } from '../../web/io/weights_file.js';
import { readFileSync } from 'node:fs';

const CLI = path.join(REPO_ROOT, 'web', 'cli', 'attnlab.mjs');
const attnlab = (...args) => spawnSync(process.execPath, [CLI, ...args, '--build', 'simd'], { encoding: 'utf8', timeout: 120_000 });
const fixture = (name) => path.join(FIXTURES, name);
const record = (r) => {
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  assert.equal(lines.length, 1, 'one record, no progress');
  return JSON.parse(lines[0]);
};

test('a notebook model saved with torch.save gives the figures of the same tensors in a .safetensors', () => {
  // (The copy model's task is not in a .pt: the notebook's section says it, and so does the flag.)
  for (const [labId, pt, safetensors, flags] of [['alignment', 'notebook_copy_model.pt', 'notebook_copy_model.safetensors', ['--task', 'copy']],
    ['count', 'count_model.pt', 'count_model.safetensors', []]]) {
    const fromPt = record(attnlab('evaluate', '--lab', labId, ...flags, '--weights', fixture(pt), '--json'));
    const fromSafetensors = record(attnlab('evaluate', '--lab', labId, ...flags, '--weights', fixture(safetensors), '--json'));
    assert.equal(fromPt.type, 'evaluation');
    assert.equal(fromPt.weights, fixture(pt));
    assert.deepEqual({ ...fromPt, weights: null }, { ...fromSafetensors, weights: null }, `${labId}: the same figures`);
  }
  // In text, the figures under a line that names the file.
  const text = attnlab('evaluate', '--lab', 'count', '--weights', fixture('count_model.pt'));
  assert.equal(text.status, 0, text.stderr);
  assert.match(text.stdout, /^One query lab, weights count_model\.pt \(evaluated on fresh data of seed 2\):\naccuracy on 10000 fresh sequences: [\d.]+% .*\nattention on the 2s and 4s: [\d.]+ \(flat attention: [\d.]+\)\n$/);
});

test('train --load takes a .pt as well, and evaluate refuses what it cannot take, by name', () => {
  const trained = attnlab('train', '--lab', 'count', '--load', fixture('count_model.pt'), '--steps', '2', '--json');
  assert.equal(trained.status, 0, trained.stderr);
  // Another lab's model: every name that does not fit is named, with its shape.
  let r = attnlab('evaluate', '--lab', 'alignment', '--task', 'copy', '--weights', fixture('count_model.pt'));
  assert.equal(r.status, 2);
  assert.match(r.stderr, /^attnlab: cannot load '.*count_model\.pt': the weights do not fit this model: missing keys: tok_emb\.weight, .*; unexpected keys: embed\.weight, query, /);
  const dir = mkdtempSync(path.join(tmpdir(), 'attnlab-eval-'));
  const junk = path.join(dir, 'model.pt');
  writeFileSync(junk, Buffer.concat([Buffer.from('PK\x03\x04'), Buffer.alloc(64, 7)]));
  r = attnlab('evaluate', '--lab', 'count', '--weights', junk);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /^attnlab: cannot load '.*model\.pt': model\.pt: .+\n$/);
  r = attnlab('evaluate', '--lab', 'count');
  assert.equal(r.status, 2);
  assert.match(r.stderr, /evaluate needs --weights FILE/);
  r = attnlab('evaluate', '--lab', 'count', '--weights', fixture('count_model.pt'), '--steps', '5');
  assert.equal(r.status, 2);
  assert.match(r.stderr, /evaluate trains nothing: --steps, --save and --every belong to train/);
});

test('readWeightsFile: a .pt and a .safetensors of the same tensors read the same', async () => {
  const module = await lab('simd');
  const pt = readWeightsFile(module, new Uint8Array(readFileSync(fixture('count_model.pt'))), 'count_model.pt');
  const st = readWeightsFile(module, new Uint8Array(readFileSync(fixture('count_model.safetensors'))), 'count_model.safetensors');
  assert.deepEqual(Object.keys(pt.tensors).sort(), Object.keys(st.tensors).sort());
  for (const [name, t] of Object.entries(st.tensors)) {
    assert.deepEqual(pt.tensors[name].shape, t.shape, name);
    assert.deepEqual(Array.from(pt.tensors[name].data), Array.from(t.data), name);
  }
});
