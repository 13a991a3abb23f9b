// The checkpoint-model registry (web/models/registry.js, issue 24): a folder's kind comes from its
// config.json's model_type, as transformers' AutoModel finds it, so a folder opened in the wrong lab is
// named for what it is and sent to the lab (and command) that reads it; an unknown model_type and a
// config.json that is not JSON are refused by name. Through the CLI too: exit 2, one line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FIXTURES } from './support.mjs';
import { REPO_ROOT } from '../../web/node_loader.mjs';
import { folderSources } from '../../web/cli/file_source.mjs';
import { MODEL_KINDS, kindForLab, kindOfModelType, labKinds, modelTypeOf, openCheckpoint } from '../../web/models/registry.js';
import { TOKENIZER_READERS } from '../../web/models/tokenizer_readers.js';

const CLI = path.join(REPO_ROOT, 'web', 'cli', 'attnlab.mjs');
const BERT = path.join(FIXTURES, 'bert_tiny', 'modern');
const MARIAN = path.join(FIXTURES, 'marian_tiny');
const attnlab = (...args) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000 });

/** A copy of a fixture folder with its config.json rewritten (or replaced by text). */
function withConfig(from, edit) {
  const dir = mkdtempSync(path.join(tmpdir(), 'attnlab-registry-'));
  for (const f of ['vocab.txt', 'model.safetensors', 'source.spm', 'target.spm', 'vocab.json']) {
    try {
      copyFileSync(path.join(from, f), path.join(dir, f));
    } catch {
      // not every kind has every file
    }
  }
  const config = JSON.parse(readFileSync(path.join(from, 'config.json'), 'utf8'));
  const edited = edit(config);
  writeFileSync(path.join(dir, 'config.json'), typeof edited === 'string' ? edited : JSON.stringify(edited));
  return dir;
}

test('the kind from config.json\'s model_type, once for the openers and both Hub clients', async () => {
  const typeOf = (dir) => modelTypeOf(readFileSync(path.join(dir, 'config.json'), 'utf8'));
  assert.equal(kindOfModelType(typeOf(BERT)).kind, 'bert');
  assert.equal(kindOfModelType(typeOf(MARIAN)).kind, 'marian');
  assert.equal(kindOfModelType(typeOf(path.join(FIXTURES, 'gpt2_tiny', 'lm'))).kind, 'gpt2');
  assert.equal(kindOfModelType('mistral'), null);
  assert.deepEqual([kindOfModelType('llama').kind, kindOfModelType('llama').lab.id], ['llama', 'writing']);
  assert.equal(modelTypeOf('{"hidden_size": 4}'), null, 'no model_type');
  assert.throws(() => modelTypeOf('{"model_type": '), /^CheckpointError: config\.json is not JSON/);
  // Each lab's kinds, and what a lab makes of another lab's kind and of an unknown one.
  assert.deepEqual(labKinds('writing').map((k) => k.kind), ['gpt2', 'llama', 'qwen2', 'hooked_transformer']);
  assert.deepEqual(kindForLab('marian', 'writing'), { problem: 'This folder holds a Marian (opus-mt) model (config.json\'s model_type is "marian"), '
    + 'not a GPT-2, Llama, Qwen2 or TransformerLens one', lab: kindOfModelType('marian').lab });
  assert.deepEqual(kindForLab('mistral', 'writing'), { problem: 'config.json\'s model_type is "mistral": the Writing lab reads GPT-2, Llama, Qwen2 and TransformerLens models '
    + '(model_type "gpt2" or "llama" or "qwen2" or "hooked_transformer")' });
  assert.equal(kindForLab(null, 'translation').kind.kind, 'marian', 'no model_type: the lab\'s own kind');
  assert.throws(() => kindForLab('bert', 'alignment'), /no lab 'alignment' opens checkpoints/);
  for (const kind of MODEL_KINDS) assert.equal(typeof TOKENIZER_READERS[kind.tokenizer]?.read, 'function', `${kind.kind}'s tokenizer "${kind.tokenizer}" has a reader`);
});

test('openCheckpoint refuses another kind with the lab that reads it, and opens its own', async () => {
  const module = await (await import('../../web/node_loader.mjs')).loadAttnLabNode({ build: 'simd' });
  await assert.rejects(openCheckpoint(module, await folderSources(MARIAN), { lab: 'pretrained' }),
    { name: 'CheckpointError', message: 'This folder holds a Marian (opus-mt) model (config.json\'s model_type is "marian"), not a BERT or DistilBERT one: open it in the Translation lab.', lab: kindOfModelType('marian').lab });
  await assert.rejects(openCheckpoint(module, await folderSources(BERT), { lab: 'translation' }),
    { name: 'CheckpointError', message: 'This folder holds a BERT model (config.json\'s model_type is "bert"), not a Marian (opus-mt) one: open it in the Pretrained lab.' });
  await assert.rejects(openCheckpoint(module, await folderSources(withConfig(BERT, (c) => ({ ...c, model_type: 'mistral' }))), { lab: 'pretrained' }),
    { name: 'CheckpointError', message: 'config.json\'s model_type is "mistral": Mistral checkpoints are not read here; the Pretrained lab reads BERT and DistilBERT models '
      + '(model_type "bert" or "distilbert").' });
  await assert.rejects(openCheckpoint(module, await folderSources(withConfig(BERT, (c) => ({ ...c, model_type: 'falcon' }))), { lab: 'pretrained' }),
    { name: 'CheckpointError', message: 'config.json\'s model_type is "falcon": the Pretrained lab reads BERT and DistilBERT models (model_type "bert" or "distilbert").' });
  await assert.rejects(openCheckpoint(module, await folderSources(path.join(FIXTURES, 'qwen2_tiny')), { lab: 'pretrained' }),
    { name: 'CheckpointError', message: 'This folder holds a Qwen2 model (config.json\'s model_type is "qwen2"), not a BERT or DistilBERT one: open it in the Writing lab.' });
  await assert.rejects(openCheckpoint(module, await folderSources(path.join(FIXTURES, 'gpt2_tiny', 'hub')), { lab: 'pretrained' }),
    { name: 'CheckpointError', message: 'This folder holds a GPT-2 model (config.json\'s model_type is "gpt2"), not a BERT or DistilBERT one: open it in the Writing lab.' });
  // A config.json without model_type (older exports) goes to the lab's own kind.
  const { kind, opened } = await openCheckpoint(module, await folderSources(withConfig(BERT, ({ model_type: _, ...c }) => c)), { lab: 'pretrained' });
  assert.equal(kind.kind, 'bert');
  assert.equal(opened.model.config.layers, 2);
  opened.model.delete();
});

test('the CLI names the right command for a folder of the other kind (exit 2, one line)', () => {
  let r = attnlab('pretrained', '--model', MARIAN, '--text', 'x', '--backend', 'simd');
  assert.equal(r.status, 2, r.stderr);
  assert.equal(r.stderr, 'attnlab: This folder holds a Marian (opus-mt) model (config.json\'s model_type is "marian"), not a BERT or DistilBERT one: '
    + 'open it in the Translation lab (attnlab translate).\n');
  r = attnlab('translate', '--model', BERT, '--backend', 'simd');
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /^attnlab: This folder holds a BERT model .*: open it in the Pretrained lab \(attnlab pretrained\)\.\n$/);
});

test('an architecture the core knows and does not compute is named with what it lacks: Mistral\'s sliding window', async () => {
  const LLAMA = path.join(FIXTURES, 'llama_tiny');
  const mistral = withConfig(LLAMA, (c) => ({ ...c, model_type: 'mistral', sliding_window: 4096 }));
  for (const f of ['vocab.json', 'merges.txt']) copyFileSync(path.join(LLAMA, f), path.join(mistral, f));
  const module = await (await import('../../web/node_loader.mjs')).loadAttnLabNode({ build: 'simd' });
  const sentence = 'config.json\'s model_type is "mistral": Mistral\'s sliding-window attention (sliding_window 4096) is not read here; '
    + 'the Writing lab reads GPT-2, Llama, Qwen2 and TransformerLens models (model_type "gpt2" or "llama" or "qwen2" or "hooked_transformer").';
  await assert.rejects(openCheckpoint(module, await folderSources(mistral), { lab: 'writing' }), { name: 'CheckpointError', message: sentence });
  const r = attnlab('generate', '--model', mistral, '--text', 'x');
  assert.equal(r.status, 2, r.stderr);
  assert.equal(r.stderr, `attnlab: ${sentence}\n`);
  // Without a window, and any model_type the core has never heard of: the lab's kinds only.
  assert.equal(module.unreadArchitecture(JSON.stringify({ model_type: 'mistral', sliding_window: null })), 'Mistral checkpoints are not read here');
  assert.equal(module.unreadArchitecture(JSON.stringify({ model_type: 'falcon' })), '');
  assert.equal(module.unreadArchitecture('not json'), '');
});
