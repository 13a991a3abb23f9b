// The Induction export as a user's file opened where decoders open (web/models/hooked_transformer.js, then
// the decoder's plan): 400 seeded mutations of tests/fixtures/induction_trained.safetensors (a tensor
// dropped, renamed, reshaped with its values kept, transposed, its dtype widened; the
// hooked_transformer_config's fields removed or set to wrong types, negative, huge or absurd strings; the
// metadata not JSON) each either opens a model that runs a prompt, or is refused with a CheckpointError or
// AttnLabError whose one line names what is wrong; nothing else escapes, and the module keeps working.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { lab, FIXTURES } from './support.mjs';
import { seededRandom as rng } from './attention_problems.mjs';
import { openCheckpoint } from '../../web/models/registry.js';
import { parseSafetensors, writeSafetensors } from '../../web/io/safetensors.js';

const original = readFileSync(path.join(FIXTURES, 'induction_trained.safetensors'));
const source = (bytes, name = 'export.safetensors') => ({ name, size: bytes.length,
  read: async (o, n) => bytes.slice(o, o + n), text: async () => new TextDecoder().decode(bytes) });

const VALUES = [null, -1, 0, 1, 3, 2 ** 31, 1e12, 1.5, 'LN', 'RMS', 'gelu', 'relu', 'rotary', '', true, false, [], {}, 'x'.repeat(500)];

function mutate(seed) {
  const r = rng(seed), pick = (list) => list[Math.floor(r() * list.length)];
  const { tensors, metadata } = parseSafetensors(original);
  const t = Object.fromEntries(Object.entries(tensors).map(([k, v]) => [k, { shape: v.shape.slice(), data: v.data }]));
  const meta = { ...metadata };
  const cfg = JSON.parse(meta.hooked_transformer_config);
  const names = Object.keys(t);
  const what = pick(['drop', 'rename', 'reshape', 'transpose', 'config', 'config', 'config', 'metadata']);
  const name = pick(names);
  if (what === 'drop') delete t[name];
  else if (what === 'rename') { t[`${name}.x`] = t[name]; delete t[name]; }
  else if (what === 'reshape') t[name].shape = [t[name].data.length];
  else if (what === 'transpose') t[name].shape = t[name].shape.slice().reverse();
  else if (what === 'config') {
    const field = pick([...Object.keys(cfg), 'use_attn_scale', 'd_vocab_out', 'eps']);
    if (r() < 0.3) delete cfg[field];
    else cfg[field] = pick(VALUES);
  }
  if (what === 'metadata') meta.hooked_transformer_config = pick(['{', '[]', '3', '"x"', 'null']);
  else meta.hooked_transformer_config = JSON.stringify(cfg);
  return { bytes: writeSafetensors(t, meta), what: `${what} ${name}` };
}

test('400 mutated Induction exports: each opens and runs, or is refused in one named line; the module keeps working', async () => {
  const module = await lab('simd');
  let opened = 0, refused = 0;
  for (let seed = 0; seed < 400; seed++) {
    const { bytes, what } = mutate(seed);
    try {
      const { opened: o } = await openCheckpoint(module, [source(bytes)], { lab: 'writing' });
      const ids = o.tokenizer.encode('5 6 7 5 6').ids;
      o.model.forward(ids);
      assert.equal(o.model.logits().length, o.model.config.vocabSize, `case ${seed} (${what})`);
      o.model.delete();
      opened++;
    } catch (error) {
      assert.ok(['CheckpointError', 'AttnLabError'].includes(error.name), `case ${seed} (${what}): ${error.name}: ${error.message}`);
      assert.equal(error.message.split('\n').length, 1, `case ${seed}: ${error.message}`);
      assert.ok(error.message.length < 600, `case ${seed}: a message of ${error.message.length} characters`);
      refused++;
    }
  }
  assert.ok(opened > 20 && refused > 100, `opened ${opened}, refused ${refused}`);
  const { opened: o } = await openCheckpoint(module, [source(original)], { lab: 'writing' });
  o.model.forward(o.tokenizer.encode('5 6 7').ids);
  o.model.delete();
});
