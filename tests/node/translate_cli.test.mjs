// `attnlab translate` (issue 14's headless side) on the tiny opus-mt-shaped checkpoint: the JSON's
// pieces, ids, generated ids and per-token cross-attention against PyTorch; the heatmap PNG; bad
// folders exit 2 with the reason.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PNG } from 'pngjs';
import { fixture, FIXTURES, maxAbsDiff } from './support.mjs';
import { REPO_ROOT } from '../../web/node_loader.mjs';
import { parseSafetensors } from '../../web/io/safetensors.js';

const CLI = path.join(REPO_ROOT, 'web', 'cli', 'attnlab.mjs');
const ref = fixture('marian_tiny_reference.safetensors');
const meta = parseSafetensors(readFileSync(path.join(FIXTURES, 'marian_tiny_reference.safetensors'))).metadata;
const FOLDER = path.join(FIXTURES, 'marian_tiny');
const run = (...args) => spawnSync(process.execPath, [CLI, 'translate', ...args], { encoding: 'utf8', cwd: REPO_ROOT });

for (const [kind, beams] of [['greedy', '1'], ['beam', '4']]) {
  test(`attnlab translate --beams ${beams} --json: ids, translation and each token's cross-attention match PyTorch's ${kind} search`, () => {
    const r = run('--model', FOLDER, '--text', meta['cat.source_text'], '--beams', beams, '--json');
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout.split('\n')[0]);
    assert.deepEqual(out.source.ids, Array.from(ref['cat.input_ids'].data));
    assert.deepEqual(out.target.ids, Array.from(ref[`cat.${kind}.ids`].data).slice(1), 'the generated ids (the start token left out)');
    assert.equal(out.translation, meta[`cat.${kind}.text`]);
    assert.ok(maxAbsDiff(Float32Array.from(out.crossAttention.flat(3)), ref[`cat.${kind}.cross_attentions`].data) <= 1e-4);
  });
}

test('attnlab translate reads a folder with only pytorch_model.bin, and translates as from model.safetensors', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'attnlab-tr-bin-'));
  for (const f of ['config.json', 'source.spm', 'target.spm', 'vocab.json', 'pytorch_model.bin']) copyFileSync(path.join(FOLDER, f), path.join(dir, f));
  try {
    for (const beams of ['1', '4']) {
      const fromBin = run('--model', dir, '--text', meta['cat.source_text'], '--beams', beams, '--json');
      const fromSafetensors = run('--model', FOLDER, '--text', meta['cat.source_text'], '--beams', beams, '--json');
      assert.equal(fromBin.status, 0, fromBin.stderr);
      assert.equal(fromSafetensors.status, 0, fromSafetensors.stderr);
      assert.equal(fromBin.stdout, fromSafetensors.stdout, `--beams ${beams}: the same JSON`);
    }
  } finally {
    rmSync(dir, { recursive: true });
  }
});

test('attnlab translate --png writes the cross-attention heatmap; bad folders and flags exit 2', () => {
  const png = path.join(mkdtempSync(path.join(tmpdir(), 'attnlab-tr-')), 'cross.png');
  let r = run('--model', FOLDER, '--text', 'The cat sat on the mat.', '--png', png);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^source \(13 pieces\): ▁Th e ▁cat/);
  const image = PNG.sync.read(readFileSync(png));
  assert.ok(image.width > 300 && image.height > 300);
  r = run('--model', FIXTURES, '--text', 'x');
  assert.equal(r.status, 2);
  assert.match(r.stderr, /^attnlab: A Marian \(opus-mt\) checkpoint needs config\.json, source\.spm, target\.spm, vocab\.json, and model\.safetensors or pytorch_model\.bin; missing /);
  r = run('--model', FOLDER, '--text', 'x', '--beams', '40');
  assert.equal(r.status, 2);
  assert.match(r.stderr, /^attnlab: --beams must be an integer in \[1, 16\], got '40'\n/);
  r = run('--text', 'x');
  assert.equal(r.status, 2);
  assert.equal(r.stderr, 'attnlab: --model DIR|ID is required\n', 'one line (attnlab translate --help has the usage)');  // The layer and head pick one head only with --cross-view one (notebook 04's head mean is the default).
  r = run('--model', FOLDER, '--layer', '1');
  assert.equal(r.status, 2);
  assert.match(r.stderr, /^attnlab: --layer applies to --cross-view one only\n/);
  r = run('--model', FOLDER, '--cross-view', 'one', '--layer', '5');
  assert.equal(r.status, 2);
  assert.match(r.stderr, /^attnlab: --layer 5: this model's decoder has 2 layers \(0\.\.1\)/);
  r = run('--model', FOLDER, '--cross-view', 'first');
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--cross-view must be one of last, all, one/);
});
