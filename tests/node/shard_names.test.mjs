// A shard's name is judged twice: by the Hub clients and the folder openers before any shard is fetched
// (web/models/checkpoint_files.js shardNameProblem: a hostile index must not become a URL or a path),
// and by the module when it opens the index (core/io/safetensors_shards.cpp shard_name_problem). Both
// must give the same verdict, and for ASCII names the same words: here on every hostile name the issue
// lists and on 5,000 names drawn from the characters that matter (slashes, dots, colons, control
// characters, multi-byte UTF-8, the .safetensors ending), seeded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lab } from './support.mjs';
import { MAX_SHARDS, SHARD_INDEX, shardNames } from '../../web/models/checkpoint_files.js';

const CONFIG = JSON.stringify({ model_type: 'llama' });

/** The JS verdict on one name: null (accepted) or the message. */
function jsVerdict(name) {
  try {
    shardNames(JSON.stringify({ weight_map: { 'model.embed_tokens.weight': name } }));
    return null;
  } catch (error) {
    return error.message;
  }
}

/** The module's verdict: null when the name passed its rule (it then misses the shard among the files given), or the message. */
async function moduleVerdict(module, name) {
  const index = JSON.stringify({ weight_map: { 'model.embed_tokens.weight': name } });
  try {
    await module.loadCheckpoint('llama', { config: CONFIG, index, shards: [] });
    return 'opened';
  } catch (error) {
    return error.message === `${SHARD_INDEX} names ${name}, which is not among the files given` ? null : error.message;
  }
}

const HOSTILE = [
  '../model-00001-of-00002.safetensors', 'sub/model-00001-of-00002.safetensors', 'C:\\model.safetensors', '..', '.', '',
  '.hidden.safetensors', '.safetensors', 'model.safetensors', 'model-00001-of-00002.bin', 'model-00001.safetensors.tmp',
  'a:b.safetensors', 'tab\there.safetensors', 'new\nline.safetensors', 'del\u007f.safetensors', 'nul\u0000.safetensors',
  `${'x'.repeat(244)}.safetensors`, `${'x'.repeat(243)}.safetensors`, `${'é'.repeat(122)}.safetensors`, `${'é'.repeat(121)}.safetensors`,
  'model-00001-of-00002.safetensors', 'модель-00001.safetensors', '😀.safetensors', ' spaced .safetensors',
];

/** 5,000 names from the characters the rule is about, seeded (a 32-bit LCG). */
function drawnNames(seed, count) {
  const pieces = ['a', 'Z', '0', '-', '_', ' ', '.', '..', '/', '\\', ':', '\u0001', '\u007f', 'é', '😀', '.safetensors', 'safetensors', 'model', '.bin'];
  let state = seed >>> 0;
  const next = (n) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state % n;
  };
  return Array.from({ length: count }, () => {
    const parts = Array.from({ length: 1 + next(6) }, () => pieces[next(pieces.length)]);
    if (next(2)) parts.push('.safetensors');
    return parts.join('');
  });
}

const isAscii = (s) => /^[\u0000-\u007f]*$/.test(s);

test('the JS check and the module judge a shard name alike: the hostile names, then 5,000 drawn ones', async () => {
  const module = await lab('simd');
  const disagreements = [];
  let refused = 0;
  for (const name of [...HOSTILE, ...drawnNames(7, 5000)]) {
    const js = jsVerdict(name), wasm = await moduleVerdict(module, name);
    if (js) refused += 1;
    const same = isAscii(name) ? js === wasm : (js === null) === (wasm === null);
    if (!same) disagreements.push(`${JSON.stringify(name)}: JS ${JSON.stringify(js)}, module ${JSON.stringify(wasm)}`);
  }
  assert.deepEqual(disagreements.slice(0, 10), [], `${disagreements.length} names judged differently`);
  assert.ok(refused > 1000 && refused < 5000, `both sides reached: ${refused} refused`);
  // The rule's edges, by name: a file name is at most 255 bytes (UTF-8), as file systems count it.
  assert.equal(jsVerdict(`${'é'.repeat(121)}.safetensors`), null, '254 bytes');
  assert.match(jsVerdict(`${'é'.repeat(122)}.safetensors`), /a shard's name must be a file name of 1 to 255 bytes/);
  assert.match(jsVerdict('../model-00001-of-00002.safetensors'), /names a folder/);
});

test('an index of 400,000 tensors reads in one pass: two shards named; 400,000 shards refused at the 1,001st, as the module refuses it', async () => {
  const two = {}, many = {};
  for (let i = 0; i < 400000; i++) {
    two[`model.layers.${i}.weight`] = `model-0000${1 + (i % 2)}-of-00002.safetensors`;
    many[`model.layers.${i}.weight`] = `model-${i}.safetensors`;
  }
  assert.deepEqual(shardNames(JSON.stringify({ weight_map: two })), ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors']);
  const manyText = JSON.stringify({ weight_map: many });
  assert.throws(() => shardNames(manyText), { message: `${SHARD_INDEX}: names more than ${MAX_SHARDS} shards` });
  const module = await lab('simd');
  await assert.rejects(module.loadCheckpoint('llama', { config: CONFIG, index: manyText, shards: [] }),
    { message: `${SHARD_INDEX}: names more than ${MAX_SHARDS} shards` });
});
