// Circuits on the model the student trained (issue 44, item 3): the Induction lab's export (one
// .safetensors file, TransformerLens's names) opened by `attnlab attribute` and `attnlab patch` as a
// TransformerLens kind (core/models/hooked_transformer.h, web/models/hooked_transformer.js) gives
// PyTorch's numbers (tests/fixtures/make_hooked_circuits_fixtures.py: plain PyTorch to TransformerLens's
// conventions on the exported weights, float64, within twice its float32 error, at least 1e-5), on the
// lab's trained model (attention only, no LayerNorm) and on a three-layer one with LayerNorm and the GELU
// MLP; on the repeated-random-tokens pair the layer-1 heads carry the answer, layer 0's do not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FIXTURES, torchReference } from './support.mjs';
import { REPO_ROOT } from '../../web/node_loader.mjs';
import { writeSafetensors } from '../../web/io/safetensors.js';

const CLI = path.join(REPO_ROOT, 'web', 'cli', 'attnlab.mjs');
const run = (...args) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', cwd: REPO_ROOT });
const { file, torch, close } = torchReference('hooked_circuits_reference.safetensors');
const meta = (key) => file.metadata[key];
const MODELS = JSON.parse(meta('models'));

const args = (m, ...rest) => ['--model', path.join(FIXTURES, meta(`${m}.file`)), '--answer', meta(`${m}.answer.text`),
  '--wrong', meta(`${m}.wrong.text`), '--json', ...rest];

test('attnlab attribute --model EXPORT.safetensors: the Induction lab\'s models\' parts are PyTorch\'s and add up to the difference', () => {
  for (const m of MODELS) {
    const out = run('attribute', '--text', meta(`${m}.clean.text`), ...args(m));
    assert.equal(out.status, 0, `${m}: ${out.stderr}`);
    const r = JSON.parse(out.stdout.trim().split('\n')[0]);
    assert.deepEqual(r.prompt.ids, Array.from(torch(`${m}.clean.ids`)), `${m}: the start token first, then the ids typed`);
    assert.deepEqual([r.answer.id, r.wrong.id], Array.from(torch(`${m}.answers`)));
    close(`${m}.dla.heads`, r.heads);
    close(`${m}.dla.mlp`, r.mlp);
    close(`${m}.dla.attn_bias`, r.attnBias);
    close(`${m}.dla.embed`, r.embed);
    close(`${m}.dla.pos_embed`, r.posEmbed);
    close(`${m}.dla.constant`, r.constant);  // b_U's difference (and ln_final's bias)
    close(`${m}.dla.logit_diff`, r.logitDiff);
    assert.deepEqual([r.finalNorm, r.outputBias], [m === 'full3', true], `${m}: a final norm only with LayerNorm; b_U always`);
    assert.equal('scale' in r.hooks, m === 'full3');
    assert.ok(Math.abs(r.total - r.logitDiff) <= 1e-5, `${m}: the parts add up to ${r.total}, the model says ${r.logitDiff}`);
  }
});

test('attnlab patch --model EXPORT.safetensors: every grid is PyTorch\'s; the trained model\'s layer-1 heads carry the induction answer', () => {
  for (const m of MODELS) {
    const sites = m === 'induction' ? 'resid_pre,z,pattern,attn_out' : 'resid_pre,z,pattern,attn_out,mlp_out';
    const out = run('patch', '--clean', meta(`${m}.clean.text`), '--corrupt', meta(`${m}.corrupt.text`), ...args(m, '--what', sites));
    assert.equal(out.status, 0, `${m}: ${out.stderr}`);
    const r = JSON.parse(out.stdout.trim());
    close(`${m}.patch.clean_diff`, r.cleanDiff);
    close(`${m}.patch.corrupt_diff`, r.corruptDiff);
    for (const site of sites.split(',')) close(`${m}.patch.${site}`, r.grids[site].values);
    if (m !== 'induction') continue;
    // The clean prompt predicts its repeat's next token; the corrupted one another. Layer 1's heads'
    // outputs patched in bring the answer back (0.44 and 0.56 of it, together all), layer 0's almost none.
    const [layer0, layer1] = r.grids.z.values;
    assert.ok(r.cleanDiff > 3 && r.corruptDiff < -3, `the pair: ${r.cleanDiff}, ${r.corruptDiff}`);
    assert.ok(Math.max(...layer1) > 0.4 && layer1[0] + layer1[1] > 0.9, `layer 1's heads recover ${layer1}`);
    assert.ok(Math.max(...layer0.map(Math.abs)) < 0.05, `layer 0's heads recover ${layer0}`);
  }
});

test('the export refused in words: mlp_out on an attention-only model, a token not in the vocabulary, a file that is no export', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'attnlab-hooked-'));
  const plain = path.join(dir, 'weights.safetensors');
  writeFileSync(plain, writeSafetensors({ w: { shape: [2], data: new Float32Array(2) } }));
  const m = 'induction';
  const cases = [
    [['patch', '--clean', meta(`${m}.clean.text`), '--corrupt', meta(`${m}.corrupt.text`), ...args(m, '--what', 'mlp_out')],
      /^attnlab: this model is attention only: it has no MLP, so there is no hook_mlp_out to patch/],
    [['attribute', '--text', '5 99 7', ...args(m)], /^attnlab: "99" is not a token of this model: it reads token ids 1 to 63/],
    [['attribute', '--text', '5 6 7', '--model', plain, '--answer', '1', '--wrong', '2'],
      /^attnlab: weights\.safetensors is one \.safetensors file without an Induction lab export's HookedTransformerConfig/],
  ];
  for (const [argv, message] of cases) {
    const out = run(...argv);
    assert.equal(out.status, 2, `${argv.join(' ')}: ${out.stderr}`);
    assert.match(out.stderr.trim(), message);
    assert.equal(out.stderr.trim().split('\n').length, 1, out.stderr);
  }
});
