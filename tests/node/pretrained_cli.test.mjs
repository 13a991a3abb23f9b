// `attnlab pretrained` (issue 13's headless side): the tiny checkpoints of make_bert_fixtures.py through
// the CLI, as a course's autograder would run it. The JSON's tokens, ids and every layer's attention
// against PyTorch; the [MASK] predictions; the page's heatmap as a PNG; bad folders exit 2 with the
// page's message.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, copyFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PNG } from 'pngjs';
import { fixture, FIXTURES, maxAbsDiff } from './support.mjs';
import { REPO_ROOT } from '../../web/node_loader.mjs';
import { parseSafetensors } from '../../web/io/safetensors.js';

const CLI = path.join(REPO_ROOT, 'web', 'cli', 'attnlab.mjs');
const ref = fixture('bert_tiny_reference.safetensors');
const meta = parseSafetensors(readFileSync(path.join(FIXTURES, 'bert_tiny_reference.safetensors'))).metadata;
const folder = (v) => path.join(FIXTURES, 'bert_tiny', v);
const run = (...args) => spawnSync(process.execPath, [CLI, 'pretrained', ...args], { encoding: 'utf8', cwd: REPO_ROOT });

test('attnlab pretrained --json: tokens, ids, token types and every layer\'s per-head attention match PyTorch', () => {
  const r = run('--model', folder('modern'), '--text', 'the cat sat on the [MASK] .', '--pair', 'a dog ran .', '--json');
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout.split('\n')[0]);
  assert.deepEqual(out.tokens, JSON.parse(meta['pair.tokens']));
  assert.deepEqual(out.ids, Array.from(ref['pair.input_ids'].data));
  assert.deepEqual(out.tokenTypeIds, Array.from(ref['pair.token_type_ids'].data));
  assert.equal(out.attentions.length, 2, 'layers');
  assert.equal(out.attentions[0].length, 2, 'heads');
  assert.ok(maxAbsDiff(Float32Array.from(out.attentions.flat(3)), ref['modern.pair.attentions'].data) <= 1e-4);
  assert.deepEqual(out.masks.map((m) => m.position), [Number(meta['pair.mask_index'])]);
  assert.deepEqual(out.masks[0].top.map((p) => p.token), JSON.parse(meta['modern.pair.mask_top5']));
  assert.match(out.backend.label, /^SIMD128 ran/);
});

test('attnlab pretrained --png writes the page\'s heatmap of the chosen layer and head; text mode names each query\'s strongest key', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'attnlab-pre-'));
  const png = path.join(dir, 'head.png');
  const r = run('--model', folder('legacy'), '--text', 'The quick brown fox jumps over the lazy dog', '--png', png, '--layer', '1', '--head', '1');
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /legacy: 2 layers × 2 heads, hidden size 32, vocabulary 179, .* \(no prefix, LayerNorm as gamma\/beta\); no \[MASK\] head; uncased\./);
  assert.match(r.stdout, /layer 1, head 1: each query's strongest key/);
  // The strongest key of each query, from the reference.
  const T = 11, w = ref['legacy.single.attentions'].data.subarray((1 * 2 + 1) * T * T, (1 * 2 + 2) * T * T);
  const tokens = JSON.parse(meta['single.tokens']);
  for (let i = 0; i < T; i++) {
    const row = Array.from(w.subarray(i * T, (i + 1) * T));
    const j = row.indexOf(Math.max(...row));
    assert.ok(r.stdout.includes(`  ${tokens[i].padEnd(12)} -> ${tokens[j]} (${row[j].toFixed(3)})`), `query ${i}`);
  }
  const image = PNG.sync.read(readFileSync(png));
  assert.ok(image.width > 300 && image.height > 300, `${image.width}x${image.height}`);
  assert.match(r.stdout, /wrote .*head\.png \(the page's figure at 2x\)|with the heatmap cells and colour bar only/);
});

test('bad folders and flags exit with code 2 and the reason', () => {
  let r = run('--model', FIXTURES, '--text', 'x');
  assert.equal(r.status, 2);
  assert.match(r.stderr, /^attnlab: A BERT checkpoint needs config\.json, vocab\.txt, and model\.safetensors or pytorch_model\.bin; missing config\.json; vocab\.txt; model\.safetensors or pytorch_model\.bin \(given: /);
  r = run('--model', path.join(FIXTURES, 'nope'), '--text', 'x');
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--model .*nope: not a folder/);
  const dir = mkdtempSync(path.join(tmpdir(), 'attnlab-pre-'));
  for (const f of ['config.json', 'vocab.txt', 'model.safetensors']) copyFileSync(path.join(folder('modern'), f), path.join(dir, f));
  writeFileSync(path.join(dir, 'model.safetensors'), readFileSync(path.join(dir, 'model.safetensors')).subarray(0, 5000));
  r = run('--model', dir, '--text', 'x');
  assert.equal(r.status, 2);
  assert.match(r.stderr, /^attnlab: model\.safetensors: tensor "[^"]+" data_offsets \[\d+, \d+\] lie outside the \d+-byte data section\n$/);
  r = run('--model', folder('modern'), '--text', 'x', '--layer', '2');
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--layer 2: this model has 2 layers \(0\.\.1\)/);
  r = run('--model', folder('modern'), '--text', 'word '.repeat(70));
  assert.equal(r.status, 2);
  assert.match(r.stderr, /reads at most 64/);
  r = run('--text', 'x');
  assert.equal(r.status, 2);
  assert.equal(r.stderr, 'attnlab: --model DIR|ID is required\n', 'one line (attnlab pretrained --help has the usage)');
  r = spawnSync(process.execPath, [CLI, 'pretrained', '--help'], { encoding: 'utf8' });
  assert.equal(r.status, 0);
  assert.match(r.stdout, /^usage: attnlab pretrained --model DIR\|ID/);
});
