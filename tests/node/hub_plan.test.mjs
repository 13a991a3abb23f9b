// The one Hub plan (web/models/hub_plan.js) alone, with no network and no storage: a Hub as a table of
// files, and the plan's requests recorded as it asks them. What both clients do follows from these
// requests (hub_cli, hub_hostile and hub_store_node test the clients' transports and stores).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { FIXTURES } from './support.mjs';
import { HubError, drivePlan, hubPlan, keptModel } from '../../web/models/hub_plan.js';
import { MAX_WEIGHT_BYTES, SHARD_INDEX } from '../../web/models/checkpoint_files.js';

const config = (dir) => readFileSync(path.join(FIXTURES, dir, 'config.json'), 'utf8');
const LLAMA = config('llama_tiny');

/** A Hub of `files` ({name: text, or {bytes}: a size only}) -> {result} or {error}, and the requests in order. */
async function plan(files, { lab = 'writing', checkConfig, unreadArchitecture } = {}) {
  const asked = [];
  const has = (file) => Object.hasOwn(files, file);
  const io = {
    size: (file) => (asked.push(`size ${file}`), has(file) ? (files[file].bytes ?? files[file].length) : null),
    plan: (list) => asked.push(`plan ${list.map((f) => f.file).join(',')}`),
    fetch: (file) => (asked.push(`fetch ${file}`), has(file)),
    text: (file) => files[file],
  };
  try {
    return { result: await drivePlan(hubPlan({ id: 'org/model', revision: 'main', endpoint: 'https://hub', lab, checkConfig, unreadArchitecture }), io), asked };
  } catch (error) {
    return { error, asked };
  }
}

test('a decoder: config.json, then a HEAD of each file, the first whole alternative of the tokenizer, then the downloads', async () => {
  const { result, asked } = await plan({ 'config.json': LLAMA, 'vocab.json': '{}', 'merges.txt': '', 'tokenizer_config.json': '{}', 'model.safetensors': { bytes: 1000 } });
  assert.deepEqual(asked, ['fetch config.json', 'size config.json', 'size tokenizer.json', 'size vocab.json', 'size merges.txt',
    'size tokenizer_config.json', 'size generation_config.json', 'size model.safetensors',
    'plan config.json,vocab.json,merges.txt,tokenizer_config.json,model.safetensors',
    'fetch vocab.json', 'fetch merges.txt', 'fetch tokenizer_config.json', 'fetch model.safetensors']);
  assert.deepEqual([result.kind.kind, result.weights, result.shards, result.files],
    ['llama', 'model.safetensors', [], ['config.json', 'vocab.json', 'merges.txt', 'tokenizer_config.json', 'model.safetensors']]);
  // With tokenizer.json there, it alone: GPT-2's two files are not asked for.
  const json = await plan({ 'config.json': LLAMA, 'tokenizer.json': '{}', 'vocab.json': '{}', 'merges.txt': '', 'model.safetensors': { bytes: 10 } });
  assert.deepEqual(json.result.files, ['config.json', 'tokenizer.json', 'model.safetensors']);
  assert.ok(!json.asked.includes('size vocab.json'));
});

test('what is missing is said before anything but config.json is downloaded', async () => {
  let r = await plan({ 'config.json': LLAMA, 'vocab.json': '{}', 'model.safetensors': { bytes: 10 } });
  assert.ok(r.error instanceof HubError);
  assert.equal(r.error.message, 'org/model: the model has no tokenizer.json or vocab.json + merges.txt, which a Llama checkpoint needs');
  assert.deepEqual(r.asked.filter((q) => q.startsWith('fetch')), ['fetch config.json']);
  r = await plan({ 'config.json': LLAMA, 'tokenizer.json': '{}' });
  assert.equal(r.error.message, 'org/model: the model has none of model.safetensors, model.safetensors.index.json, pytorch_model.bin (the weights a Llama checkpoint is read from)');
  r = await plan({});
  assert.equal(r.error.message, 'org/model: no such model on https://hub (config.json not found at revision main)');
  r = await plan({ 'config.json': '{"model_type": ' });
  assert.equal(r.error.message, 'org/model: its config.json is not JSON');
});

test('another lab\'s kind, an unread architecture and the module\'s config check stop the plan after config.json', async () => {
  let r = await plan({ 'config.json': config('marian_tiny') });
  assert.equal(r.error.message, 'org/model: it is a Marian (opus-mt) model (config.json\'s model_type is "marian"), not a GPT-2, Llama, Qwen2 or TransformerLens one '
    + '(only its config.json was downloaded): open it in the Translation lab.');
  assert.equal(r.error.lab.id, 'translation');
  r = await plan({ 'config.json': JSON.stringify({ model_type: 'mistral', sliding_window: 4096 }) },
    { unreadArchitecture: (text) => (JSON.parse(text).model_type === 'mistral' ? 'Mistral\'s sliding-window attention (sliding_window 4096) is not read here' : '') });
  assert.equal(r.error.message, 'org/model: config.json\'s model_type is "mistral": Mistral\'s sliding-window attention (sliding_window 4096) is not read here; '
    + 'the Writing lab reads GPT-2, Llama, Qwen2 and TransformerLens models (model_type "gpt2" or "llama" or "qwen2" or "hooked_transformer") (only its config.json was downloaded).');
  r = await plan({ 'config.json': LLAMA }, { checkConfig: (kind) => `${kind}: too large` });
  assert.equal(r.error.message, 'org/model: llama: too large; nothing of its weights was downloaded');
  assert.deepEqual(r.asked, ['fetch config.json']);
});

test('a sharded model: the index, every shard\'s size summed against a lab\'s memory before any shard comes', async () => {
  const index = (shards) => JSON.stringify({ weight_map: Object.fromEntries(shards.map((s, i) => [`t${i}`, s])) });
  const base = { 'config.json': LLAMA, 'tokenizer.json': '{}' };
  let r = await plan({ ...base, [SHARD_INDEX]: index(['a.safetensors', 'b.safetensors']), 'a.safetensors': { bytes: 5 }, 'b.safetensors': { bytes: 7 } });
  assert.deepEqual([r.result.weights, r.result.shards], [SHARD_INDEX, ['a.safetensors', 'b.safetensors']]);
  assert.deepEqual(r.asked.slice(r.asked.indexOf('size model.safetensors')), ['size model.safetensors', `size ${SHARD_INDEX}`, `fetch ${SHARD_INDEX}`,
    'size a.safetensors', 'size b.safetensors', `plan config.json,tokenizer.json,${SHARD_INDEX},a.safetensors,b.safetensors`,
    'fetch tokenizer.json', 'fetch a.safetensors', 'fetch b.safetensors'], 'the index once, every shard sized before any comes');
  r = await plan({ ...base, [SHARD_INDEX]: index(['a.safetensors', 'b.safetensors']), 'a.safetensors': { bytes: MAX_WEIGHT_BYTES }, 'b.safetensors': { bytes: 1 } });
  assert.match(r.error.message, /^org\/model: its 2 shards \(model\.safetensors\.index\.json\) are \d+ MB in all: its weights need at least that much memory/);
  r = await plan({ ...base, [SHARD_INDEX]: index(['a.safetensors']), 'a.safetensors': { bytes: NaN } });
  assert.match(r.error.message, /^org\/model: the Hub's answer for the shard a\.safetensors gives no size/);
  r = await plan({ ...base, [SHARD_INDEX]: index(['a.safetensors']) });
  assert.equal(r.error.message, 'org/model: model.safetensors.index.json names the shard a.safetensors, which the Hub does not have at revision main');
  r = await plan({ ...base, [SHARD_INDEX]: index(['../a.safetensors']) });
  assert.match(r.error.message, /^org\/model: model\.safetensors\.index\.json: shard "\.\.\/a\.safetensors" names a folder/);
  assert.ok(!r.asked.some((q) => q.startsWith('fetch ../') || q.startsWith('size ../')), 'nothing asked of the path');
});

test('keptModel: a store holds a whole model of the lab\'s kind, of another lab\'s, or none', async () => {
  const store = (files) => ({ has: async (f) => Object.hasOwn(files, f), text: async (f) => files[f] });
  let kept = await keptModel('writing', store({ 'config.json': LLAMA, 'vocab.json': '', 'merges.txt': '', 'model.safetensors': '' }));
  assert.deepEqual([kept.kind.kind, kept.files], ['llama', ['config.json', 'vocab.json', 'merges.txt', 'model.safetensors']], 'config.json\'s kind');
  kept = await keptModel('writing', store({ 'config.json': '{}', 'vocab.txt': '', 'pytorch_model.bin': '' }));
  assert.deepEqual([kept.kind.kind, kept.files], ['bert', ['config.json', 'vocab.txt', 'pytorch_model.bin']], 'no model_type: the kind whose files are there (the opener names its lab)');
  assert.equal(await keptModel('writing', store({ 'config.json': config('marian_tiny'), 'vocab.txt': '', 'pytorch_model.bin': '' })), null, 'a Marian without its files');
  assert.equal(await keptModel('writing', store({ 'config.json': '', 'tokenizer.json': '' })), null, 'no weights');
  assert.equal(await keptModel('writing', store({ 'config.json': '', 'tokenizer.json': '', [SHARD_INDEX]: '{"weight_map": {"t": "a.safetensors"}}' })), null,
    'an index without its shard');
});
