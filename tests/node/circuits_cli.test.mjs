// Circuits headless (issue 44, item 4): `attnlab attribute` and `attnlab patch` on the tiny GPT-2, Llama
// and Qwen 2 folders give PyTorch's numbers (tests/fixtures/make_circuits_fixtures.py: plain PyTorch
// written to TransformerLens's conventions, float64, within twice its own float32 error, at least 1e-5),
// from the texts and answer words a student types; --cache writes the activations under their hook
// names, read back equal to PyTorch's cache; a mismatched pair or an answer that is not one token exits
// 2 with one sentence.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FIXTURES, torchReference } from './support.mjs';
import { REPO_ROOT } from '../../web/node_loader.mjs';
import { parseSafetensors } from '../../web/io/safetensors.js';

const CLI = path.join(REPO_ROOT, 'web', 'cli', 'attnlab.mjs');
const run = (...args) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', cwd: REPO_ROOT });
const FOLDERS = { gpt2: 'gpt2_tiny/hub', llama: 'llama_tiny', qwen2: 'qwen2_tiny' };
const { file, torch, tolerance, close } = torchReference('circuits_reference.safetensors');
const texts = (m) => ({ clean: file.metadata[`${m}.clean.text`], corrupt: file.metadata[`${m}.corrupt.text`],
  answer: file.metadata[`${m}.answer.text`].trim(), wrong: file.metadata[`${m}.wrong.text`].trim() });

test('attnlab attribute: every head, layer bias, MLP and embedding part is PyTorch\'s, and they add up to the logit difference', () => {
  for (const [m, folder] of Object.entries(FOLDERS)) {
    const t = texts(m);
    const out = run('attribute', '--model', path.join(FIXTURES, folder), '--text', t.clean, '--answer', t.answer,
      '--wrong', t.wrong, '--json');
    assert.equal(out.status, 0, `${m}: ${out.stderr}`);
    const r = JSON.parse(out.stdout.trim().split('\n')[0]);
    assert.deepEqual(r.prompt.ids, Array.from(torch(`${m}.clean.ids`)), `${m}: the clean text's tokens`);
    assert.deepEqual([r.answer.id, r.wrong.id], Array.from(torch(`${m}.answers`)), `${m}: the answers' tokens`);
    close(`${m}.dla.heads`, r.heads);
    close(`${m}.dla.mlp`, r.mlp);
    close(`${m}.dla.attn_bias`, r.attnBias);
    close(`${m}.dla.embed`, r.embed);
    if (m === 'gpt2') close(`${m}.dla.pos_embed`, r.posEmbed);
    close(`${m}.dla.constant`, r.constant);
    close(`${m}.dla.logit_diff`, r.logitDiff);
    assert.ok(Math.abs(r.total - r.logitDiff) <= 1e-5, `${m}: the parts add up to ${r.total}, the model says ${r.logitDiff}`);
    assert.equal(r.hooks.heads, 'blocks.{L}.attn.hook_z (times W_O[head])');
  }
});

test('attnlab patch: every grid (resid_pre, z, pattern, attn_out, mlp_out) is PyTorch\'s; --cache writes the clean run under TransformerLens\'s names', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'attnlab-patch-'));
  for (const [m, folder] of Object.entries(FOLDERS)) {
    const t = texts(m);
    const cache = path.join(dir, `${m}.safetensors`);
    const out = run('patch', '--model', path.join(FIXTURES, folder), '--clean', t.clean, '--corrupt', t.corrupt,
      '--answer', t.answer, '--wrong', t.wrong, '--what', 'resid_pre,z,pattern,attn_out,mlp_out', '--json', '--cache', cache);
    assert.equal(out.status, 0, `${m}: ${out.stderr}`);
    const [line, cacheLine] = out.stdout.trim().split('\n');
    const r = JSON.parse(line);
    close(`${m}.patch.clean_diff`, r.cleanDiff);
    close(`${m}.patch.corrupt_diff`, r.corruptDiff);
    for (const site of ['resid_pre', 'z', 'pattern', 'attn_out', 'mlp_out']) close(`${m}.patch.${site}`, r.grids[site].values);
    assert.equal(r.grids.z.hook, 'blocks.{L}.attn.hook_z');
    assert.equal(r.grids.resid_pre.cols, 'position');
    // The cache read back: every hook PyTorch's written to (and no other), each within its tolerance.
    const written = parseSafetensors(readFileSync(cache)).tensors;
    const prefix = `${m}.cache.`;
    const names = Object.keys(file.tensors).filter((n) => n.startsWith(prefix)).map((n) => n.slice(prefix.length));
    assert.deepEqual(Object.keys(written).sort(), names.sort(), `${m}: the cache's names`);
    assert.deepEqual(JSON.parse(cacheLine), { cache, activations: names.length });
    for (const name of names) {
      assert.deepEqual(written[name].shape, file.tensors[prefix + name].shape, `${m} ${name}: shape`);
      const want = torch(prefix + name), ours = written[name].data;
      let worst = 0;
      ours.forEach((x, i) => {
        if (!Number.isFinite(want[i])) assert.equal(x, want[i], `${m} ${name}[${i}]: the mask's -inf`);
        else worst = Math.max(worst, Math.abs(x - want[i]));
      });
      assert.ok(worst <= tolerance(prefix + name), `${m} ${name}: max |ours - torch| = ${worst}`);
    }
  }
});

test('attnlab patch --what picks the grids; --cache FILE.json writes the scores\' -inf as null', () => {
  const t = texts('gpt2');
  const json = path.join(mkdtempSync(path.join(tmpdir(), 'attnlab-patch-')), 'cache.json');
  const out = run('patch', '--model', path.join(FIXTURES, FOLDERS.gpt2), '--clean', t.clean, '--corrupt', t.corrupt,
    '--answer', t.answer, '--wrong', t.wrong, '--what', 'z,resid_pre', '--json', '--cache', json);
  assert.equal(out.status, 0, out.stderr);
  assert.deepEqual(Object.keys(JSON.parse(out.stdout.split('\n')[0]).grids), ['z', 'resid_pre']);
  const cache = JSON.parse(readFileSync(json, 'utf8'));
  const scores = cache['blocks.0.attn.hook_attn_scores'];
  assert.deepEqual(scores.shape, [2, 11, 11]);
  assert.equal(scores.values[0][0][1], null);
  assert.equal(typeof scores.values[0][1][0], 'number');
});

test('circuits refusals: a pair of other lengths, an answer of two tokens, the same answer twice, a cache of another format: exit 2, one sentence', () => {
  const t = texts('gpt2');
  const model = path.join(FIXTURES, FOLDERS.gpt2);
  const answers = ['--answer', t.answer, '--wrong', t.wrong];
  const cases = [
    [['patch', '--clean', t.clean, '--corrupt', `${t.corrupt} and`, ...answers], /^attnlab: the clean prompt is 11 tokens and the corrupted one 12: patching copies an activation/],
    [['attribute', '--text', t.clean, '--answer', 'catapult', '--wrong', t.wrong], /^attnlab: the answer "catapult" after the prompt is \d+ tokens \(/],
    [['attribute', '--text', t.clean, '--answer', t.wrong, '--wrong', t.wrong], /^attnlab: the answer and the wrong answer are the same token \(" toy"\)/],
    [['attribute', '--text', t.clean, ...answers, '--cache', 'out.npz'], /^attnlab: --cache out\.npz: name the file \.safetensors or \.json/],
    [['patch', '--clean', t.clean, '--corrupt', t.clean, ...answers], /^attnlab: the clean and corrupted prompts give the same logit difference/],
    [['patch', '--clean', t.clean, '--corrupt', t.corrupt, ...answers, '--what', 'z,heads'], /heads/],
  ];
  for (const [args, message] of cases) {
    const out = run(...args, '--model', model);
    assert.equal(out.status, 2, `${args.join(' ')}: ${out.stderr}`);
    assert.match(out.stderr.trim(), message, args.join(' '));
    assert.equal(out.stderr.trim().split('\n').length, 1, out.stderr);
  }
});
