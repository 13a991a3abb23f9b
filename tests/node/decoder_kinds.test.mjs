// The one list of kinds and the one writer as JS sees them (issue 36): the module's registry rows
// (core/models/model_kinds.h, `module.modelKinds`) are what web/models/registry.js's MODEL_KINDS and the
// Hub client read (its generated table is the module's, field for field), every decoder kind loads through
// the one `_RawDecoder`, and the writer's calls refuse what they cannot do by name, leaving it working.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { lab, FIXTURES } from './support.mjs';
import { folderSources } from '../../web/cli/file_source.mjs';
import { MODEL_KINDS, openCheckpoint } from '../../web/models/registry.js';
import { MODEL_KIND_ROWS } from '../../web/models/model_kinds.generated.js';
import { WEIGHT_FILES } from '../../web/models/checkpoint_files.js';
import { parseNeed } from '../../web/models/kind_files.js';
import { TOKENIZER_READERS } from '../../web/models/tokenizer_readers.js';

test('MODEL_KINDS is the C++ registry\'s rows (model_types, lab, files, tokenizer), with the weights added', async () => {
  const module = await lab('simd');
  assert.deepEqual(MODEL_KIND_ROWS, module.modelKinds, 'the generated table is the module\'s');
  assert.deepEqual(module.modelKinds.map((k) => k.kind), ['bert', 'distilbert', 'marian', 'gpt2', 'llama', 'qwen2',
    'hooked_transformer']);
  for (const [i, row] of module.modelKinds.entries()) {
    const k = MODEL_KINDS[i];
    assert.deepEqual({ kind: k.kind, title: k.title, modelTypes: k.modelTypes, lab: k.lab, tokenizer: k.tokenizer },
      { kind: row.kind, title: row.title, modelTypes: row.modelTypes, lab: row.lab, tokenizer: row.tokenizer });
    assert.deepEqual(k.files, { needs: row.files.required.map(parseNeed), optional: row.files.optional, weights: WEIGHT_FILES.map(([name]) => name) }, row.kind);
    assert.equal(typeof TOKENIZER_READERS[k.tokenizer]?.read, 'function', `${row.kind}'s tokenizer has a reader`);
  }
  // Every decoder kind is read the same way: the one binding, the one tokenizer reader, the same files.
  for (const kind of ['gpt2', 'llama', 'qwen2']) {
    const row = module.modelKinds.find((k) => k.kind === kind);
    assert.deepEqual([row.binding, row.tokenizer, row.lab.id, row.files.required], ['decoder', 'hf_tokenizers', 'writing', ['config.json', 'tokenizer.json | vocab.json + merges.txt']]);
  }
  assert.deepEqual(parseNeed('tokenizer.json | vocab.json + merges.txt'), [['tokenizer.json'], ['vocab.json', 'merges.txt']]);
});

test('a decoder\'s writer: bad calls are refused by name and the writer goes on', async () => {
  const module = await lab('simd');
  const { opened } = await openCheckpoint(module, await folderSources(path.join(FIXTURES, 'gpt2_tiny', 'hub')), { lab: 'writing' });
  const { model: gpt2 } = opened;
  try {
    assert.ok(gpt2 instanceof module.Decoder);
    assert.deepEqual(gpt2.rotarySpeeds(), new Float32Array(0), 'learned positions: no rotary speeds');
    assert.throws(() => gpt2.writeTo(3, {}), /begin writing first/);
    const ids = [84, 104, 101];
    gpt2.beginWriting(ids, { temperature: 0.7, topK: 20, maxNewTokens: 6, seed: 4, keepLogits: true }, { backend: 'simd128' });
    assert.deepEqual(gpt2.writeTo(2, { temperature: 0.7, topK: 20, maxNewTokens: 6, seed: 4 }), { written: 2, firstChanged: 0, stopReason: '' });
    assert.throws(() => gpt2.writtenStep(2), /no written token 2/);
    assert.throws(() => gpt2.distribution({ step: 3 }), /step must be in \[0, 2\]/);
    assert.throws(() => gpt2.writeTo(4, { topP: 0 }), /top-p must be in \(0, 1\]/);
    assert.throws(() => gpt2.chance(407, { step: 0 }), /id 407 is outside the vocabulary \[0, 407\)/);
    // Still writing, where it was: the bars of step 1 are its record's top tokens at its own settings.
    const settings = { temperature: 0.7, topK: 20, maxNewTokens: 6, seed: 4 };
    assert.deepEqual(gpt2.writeTo(6, settings), { written: 6, firstChanged: 2, stopReason: 'max_new_tokens' });
    const step1 = gpt2.writtenStep(1);
    assert.deepEqual(gpt2.distribution({ ...settings, k: 10, step: 1 }).map((t) => t.id), step1.top.map((t) => t.id));
    assert.equal(Math.fround(gpt2.chance(step1.id, { ...settings, step: 1 })), step1.probability);
    // The same run in one go (the CLI's calls) writes the same.
    const inPieces = Array.from({ length: 6 }, (_, k) => gpt2.writtenStep(k).id);
    assert.deepEqual(gpt2.generate(ids, settings, { backend: 'simd128' }).ids, inPieces);
  } finally {
    gpt2.delete();
  }
});
