// The Translation lab's Marian through the WASM module (issue 14): the tiny opus-mt-shaped checkpoint of
// tests/fixtures/make_marian_fixtures.py streamed from disk, tokenized by web/pretrained/sentencepiece.js,
// on every build and CPU backend: the source ids, the encoder, the teacher-forced decoder (logits and
// every attention) and generate()'s greedy and beam-search ids with their cross-attention, against the
// plain PyTorch Marian (1e-4; generated ids identical). Then bad folders, files and inputs, with messages.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, mkdtempSync, copyFileSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BUILDS, lab, fixture, FIXTURES, maxAbsDiff } from './support.mjs';
import { openMarianCheckpoint, pickMarianFiles } from '../../web/pretrained/marian_checkpoint.js';
import { folderSources } from '../../web/cli/file_source.mjs';
import { parseSafetensors } from '../../web/io/safetensors.js';

const ref = fixture('marian_tiny_reference.safetensors');
const meta = parseSafetensors(readFileSync(path.join(FIXTURES, 'marian_tiny_reference.safetensors'))).metadata;
const FOLDER = path.join(FIXTURES, 'marian_tiny');
const SENTENCES = JSON.parse(meta.sentences);
const TOL = 1e-4;
const concat = (arrays) => Float32Array.from(arrays.flatMap((a) => Array.from(a)));
const close = (ours, key, what) => {
  const diff = maxAbsDiff(ours, ref[key].data);
  assert.ok(diff <= TOL, `${what} ${key}: max |ours - torch| = ${diff}`);
};

for (const build of BUILDS) {
  test(`Marian: source ids, encoder, teacher-forced decoder, greedy and beam search match PyTorch [${build}]`, async () => {
    const module = await lab(build);
    const { marian, tokenizer } = await openMarianCheckpoint(module, await folderSources(FOLDER));
    try {
      const c = marian.config;
      for (const s of SENTENCES) {
        const { ids, pieces } = tokenizer.encode(meta[`${s}.source_text`]);
        assert.deepEqual(pieces.slice(0, -1), JSON.parse(meta[`${s}.source_pieces`]), `${s}: source pieces`);
        assert.deepEqual(Array.from(ids), Array.from(ref[`${s}.input_ids`].data), `${s}: source ids`);
        for (const backend of module.cpuBackends) {
          const what = `${build} ${backend} ${s}`;
          marian.encode(ids, { backend });
          close(concat([...Array(c.encoderLayers).keys()].map((l) => marian.encoderAttention(l))), `${s}.encoder_attentions`, what);
          marian.decode(ref[`${s}.decoder_input_ids`].data, { backend });
          close(marian.logits(), `${s}.logits`, what);
          close(concat([...Array(c.decoderLayers).keys()].map((l) => marian.decoderAttention(l))), `${s}.decoder_attentions`, what);
          close(concat([...Array(c.decoderLayers).keys()].map((l) => marian.crossAttention(l))), `${s}.cross_attentions`, what);
          for (const [kind, beams] of [['greedy', 1], ['beam', c.numBeams]]) {
            const g = marian.generate({ beams, backend });
            assert.deepEqual(g.ids, Array.from(ref[`${s}.${kind}.ids`].data), `${what}: ${kind} ids`);
            close(concat(g.cross), `${s}.${kind}.cross_attentions`, `${what} ${kind}`);
            if (kind === 'beam') assert.ok(Math.abs(g.score - ref[`${s}.beam.score`].data[0]) <= TOL, `${what}: beam score`);
            assert.equal(tokenizer.decode(g.ids), meta[`${s}.${kind}.text`], `${what}: ${kind} text`);
          }
        }
      }
    } finally {
      marian.delete();
    }
  });
}

test('beam search reports the beams and their scores at every step, as PyTorch ranks them', async () => {
  const module = await lab('simd');
  const { marian, tokenizer } = await open();
  const s = SENTENCES[0];
  marian.encode(tokenizer.encode(meta[`${s}.source_text`]).ids);
  const g = marian.generate({ beams: 4 });
  const steps = ref[`${s}.beam.step_scores`];
  const [n, B] = steps.shape;
  assert.ok(g.steps.length >= 1 && g.steps.length <= n);
  for (let i = 0; i < g.steps.length; i++) {
    const want = Array.from(steps.data.subarray(i * B, (i + 1) * B));
    const tokens = Array.from(ref[`${s}.beam.step_tokens`].data.subarray(i * B, (i + 1) * B));
    assert.deepEqual(g.steps[i].beams.map((b) => b.at(-1)), tokens, `step ${i}: each beam's last token`);
    g.steps[i].scores.forEach((x, b) => assert.ok(Math.abs(x - want[b]) <= TOL, `step ${i} beam ${b}: ${x} vs ${want[b]}`));
  }
  marian.delete();
  async function open() { return openMarianCheckpoint(module, await folderSources(FOLDER)); }
});

function tempCopy(edit) {
  const dir = mkdtempSync(path.join(tmpdir(), 'attnlab-marian-'));
  for (const f of ['config.json', 'source.spm', 'target.spm', 'vocab.json', 'model.safetensors']) copyFileSync(path.join(FOLDER, f), path.join(dir, f));
  edit(dir);
  return dir;
}

test('bad folders, files and inputs are named; the module keeps working', async () => {
  const module = await lab('simd');
  assert.throws(() => pickMarianFiles([{ name: 'config.json' }, { name: 'pytorch_model.bin' }]),
    /missing source\.spm, target\.spm, vocab\.json, model\.safetensors \(given: config\.json, pytorch_model\.bin\)\. This folder has pytorch_model\.bin only/);
  const rejects = async (edit, pattern) => {
    const dir = tempCopy(edit);
    await assert.rejects(openMarianCheckpoint(module, await folderSources(dir)), pattern);
    rmSync(dir, { recursive: true });
  };
  await rejects((dir) => writeFileSync(path.join(dir, 'config.json'), '{"model_type": "bert"}'), /config\.json: model_type is "bert"; this lab reads Marian/);
  await rejects((dir) => {
    const f = path.join(dir, 'config.json');
    writeFileSync(f, readFileSync(f, 'utf8').replace('"d_model": 32', '"d_model": 48'));
  }, /model\.safetensors: tensor "model\.shared\.weight" has shape \[649, 32\] but config\.json \(d_model 48, vocab_size 649, ffn 64\/64\) needs \[649, 48\]/);
  await rejects((dir) => {
    const f = path.join(dir, 'model.safetensors');
    const b = readFileSync(f);
    writeFileSync(f, b.subarray(0, b.length - 100));
  }, /^AttnLabError: model\.safetensors: tensor "[^"]+" data_offsets \[\d+, \d+\] lie outside the \d+-byte data section$/);
  await rejects((dir) => writeFileSync(path.join(dir, 'source.spm'), 'not a model'), /source\.spm/);
  await rejects((dir) => writeFileSync(path.join(dir, 'vocab.json'), '[1, 2]'), /vocab\.json/);
  const { marian, tokenizer } = await openMarianCheckpoint(module, await folderSources(FOLDER));
  assert.throws(() => marian.encode([0, 5000]), /source ids: token id 5000 at position 1 is outside the vocabulary \[0, 649\)/);
  assert.throws(() => marian.encode(new Array(65).fill(5)), /source ids has 65 tokens: this model has positions for 64/);
  assert.throws(() => marian.generate({ beams: 4 }), /encode\(\) first/);
  assert.throws(() => marian.decoderAttention(0), /no decoder attention: encode\(\) \(and decode\(\)\) first/);
  marian.encode(tokenizer.encode('The cat sat on the mat.').ids);
  assert.throws(() => marian.generate({ beams: 0 }), /beams must be in \[1, 16\]/);
  assert.ok(marian.generate({ beams: 1 }).ids.length > 1, 'the model still translates');
  marian.delete();
});
