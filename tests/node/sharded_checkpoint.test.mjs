// Issue 37: a sharded checkpoint (model.safetensors.index.json and its shards; the tiny llama cut in two
// by tests/fixtures/make_sharded_fixtures.py) opens through the folder openers in the module and the CLI
// with PyTorch's logits (the single file's reference); a hostile index ('../' in a shard's name, a shard
// missing, a tensor in two shards, a tensor the index places in the wrong shard) exits 2 with one line
// naming the problem. And several end-of-text ids (generation_config.json's eos_token_id as a list, as
// Llama 3's): the writer stops at any of them, through the CLI and through the binding's eosIds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { lab, fixture, FIXTURES, maxAbsDiff } from './support.mjs';
import { REPO_ROOT } from '../../web/node_loader.mjs';
import { parseSafetensors } from '../../web/io/safetensors.js';
import { folderSources } from '../../web/cli/file_source.mjs';
import { openCheckpoint } from '../../web/models/registry.js';

const CLI = path.join(REPO_ROOT, 'web', 'cli', 'attnlab.mjs');
const run = (...args) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', cwd: REPO_ROOT });
const SHARDED = path.join(FIXTURES, 'llama_tiny_sharded');
const SINGLE = path.join(FIXTURES, 'llama_tiny');
const [SHARD1, SHARD2] = ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors'];
const INDEX = 'model.safetensors.index.json';
const REF = fixture('llama_tiny_reference.safetensors');
const META = parseSafetensors(readFileSync(path.join(FIXTURES, 'llama_tiny_reference.safetensors'))).metadata;
const tol = (t) => Math.max(1e-5, 2 * Number(META[`${t}.f32_vs_f64`]));

/** A copy of the sharded folder, its index's weight_map changed by edit(map) and files by files(dir). */
function hostile(edit = () => {}, files = () => {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'attnlab-sharded-'));
  cpSync(SHARDED, dir, { recursive: true });
  const index = JSON.parse(readFileSync(path.join(dir, INDEX), 'utf8'));
  edit(index.weight_map);
  writeFileSync(path.join(dir, INDEX), JSON.stringify(index));
  files(dir);
  return dir;
}

test('a sharded llama folder opens in the module with PyTorch\'s logits, and reads as many bytes as the single file', async () => {
  const module = await lab('simd');
  const sources = await folderSources(SHARDED);
  assert.ok(sources.every((s) => s.name !== 'model.safetensors'));
  const { kind, opened: { model, summary, files } } = await openCheckpoint(module, sources, { lab: 'writing' });
  try {
    assert.equal(kind.kind, 'llama');
    assert.equal(summary.file, INDEX);
    assert.equal(summary.weights, 'BF16');
    assert.ok(files.includes(INDEX));
    const ids = Array.from(REF['prompt.input_ids'].data);
    model.forward(ids, { backend: 'simd128' });
    const V = 407, T = ids.length;
    const logits = Float32Array.from([...Array(T).keys()].flatMap((t) => Array.from(model.logits(t))));
    assert.ok(maxAbsDiff(logits, REF['prompt.logits'].data.slice(0, T * V)) <= tol('prompt.logits'));
  } finally {
    model.delete();
  }
});

test('attnlab generate on the sharded folder writes what it writes on the single file (PyTorch\'s greedy ids)', () => {
  const greedy = Array.from(REF['greedy.ids'].data);
  const args = ['--text', META['prompt.text'], '--max-new-tokens', String(greedy.length), '--temperature', '0', '--json'];
  const a = run('generate', '--model', SHARDED, ...args);
  const b = run('generate', '--model', SINGLE, ...args);
  assert.equal(a.status, 0, a.stderr);
  assert.equal(b.status, 0, b.stderr);
  const [sharded, single] = [JSON.parse(a.stdout), JSON.parse(b.stdout)];
  assert.deepEqual(sharded.generated.ids, greedy);
  assert.deepEqual(sharded.steps.map((s) => s.top), single.steps.map((s) => s.top));
  assert.deepEqual(sharded.promptAttention, single.promptAttention);
});

test('a hostile index exits 2 with one line naming the problem', () => {
  for (const [dir, message] of [
    [hostile((m) => { m['lm_head.weight'] = `../${SHARD1}`; }),
      /^attnlab: model\.safetensors\.index\.json: shard "\.\.\/model-00001-of-00002\.safetensors" names a folder: a shard is a plain file name beside the index\n$/],
    [hostile(() => {}, (d) => rmSync(path.join(d, SHARD2))),
      /^attnlab: model\.safetensors\.index\.json names the shard model-00002-of-00002\.safetensors, which is not among the files given \(given: [^\n]*\)\n$/],
    [hostile((m) => { m['lm_head.weight'] = 'model-00003-of-00003.safetensors'; }),
      /^attnlab: model\.safetensors\.index\.json names the shard model-00003-of-00003\.safetensors, which is not among the files given \(given: [^\n]*\)\n$/],
    [hostile(() => {}, (d) => copyFileSync(path.join(d, SHARD1), path.join(d, SHARD2))),
      /^attnlab: tensor "[^"]+" is in two shards, model-00001-of-00002\.safetensors and model-00002-of-00002\.safetensors: a checkpoint holds each tensor once\n$/],
    [hostile((m) => { m['lm_head.weight'] = SHARD2; }),
      /^attnlab: model\.safetensors\.index\.json places tensor "lm_head\.weight" in model-00002-of-00002\.safetensors, but model-00001-of-00002\.safetensors holds it\n$/],
  ]) {
    const r = run('generate', '--model', dir, '--text', 'The dog');
    assert.equal(r.status, 2, r.stdout);
    assert.match(r.stderr, message);
  }
});

test('several end-of-text ids: generation_config.json\'s list stops the CLI\'s writer at the first it writes; the binding\'s eosIds too', async () => {
  const greedy = Array.from(REF['greedy.ids'].data);
  const at = 2; // stop at the third written token
  const first = greedy.indexOf(greedy[at]);
  const unused = [...Array(407).keys()].find((id) => !greedy.includes(id) && id !== 406);
  const dir = mkdtempSync(path.join(tmpdir(), 'attnlab-eos-'));
  cpSync(SINGLE, dir, { recursive: true });
  writeFileSync(path.join(dir, 'generation_config.json'), JSON.stringify({ eos_token_id: [unused, greedy[at]] }));
  const r = run('generate', '--model', dir, '--text', META['prompt.text'], '--max-new-tokens', String(greedy.length), '--temperature', '0', '--json');
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.deepEqual(out.generated.ids, greedy.slice(0, first + 1));
  assert.equal(out.generated.stopReason, 'eos');

  const module = await lab('simd');
  const { opened: { model, tokenizer } } = await openCheckpoint(module, await folderSources(dir), { lab: 'writing' });
  try {
    // generation_config.json's list first; the tokenizer's own end (<|endoftext|>, 406) joins it.
    assert.deepEqual(tokenizer.eosIds.slice(0, 2), [unused, greedy[at]]);
    const ids = Array.from(REF['prompt.input_ids'].data);
    const settings = { temperature: 0, maxNewTokens: greedy.length };
    assert.deepEqual(model.generate(ids, settings).ids, greedy, 'config.json\'s eos (406) alone: the whole run');
    const stopped = model.generate(ids, { ...settings, eosIds: [unused, greedy[at]] });
    assert.deepEqual([stopped.ids, stopped.stopReason], [greedy.slice(0, first + 1), 'eos']);
    assert.throws(() => model.beginWriting(ids, { ...settings, eosIds: [1.5] }), /eosIds\[0\] must be a token id/);
    assert.throws(() => model.beginWriting(ids, { ...settings, eosIds: 3 }), /eosIds must be an array of token ids/);
  } finally {
    model.delete();
  }
});
