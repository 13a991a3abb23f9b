// The page's Hub client (web/models/hub_store.js) against the same hostile stand-in Hub as the CLI's
// (hostile_hub.mjs; hub_hostile.test.mjs drives the CLI), in Node: Cache Storage held in memory
// (memory_cache_storage.mjs) and Node's own fetch, which follows redirects and drops a token across
// origins as a browser's does. Both clients follow one plan (web/models/hub_plan.js), so each hostile case
// is refused in the same words but for the place a token is given ("the Token field") and what to do next
// ("open it again"); nothing of a refused model is kept. What a browser cannot see is not asked of it: the
// Hub's X-Linked-Size and ETags sit on a redirect that fetch follows unseen, so a weights file's size is its
// CDN's Content-Length, and the blobs are not named by ETag.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { ENDPOINT, cdnRequests, closeHostileHub, hubRequests, setTrickle, weights } from './hostile_hub.mjs';
import { MemoryCacheStorage } from './memory_cache_storage.mjs';
import { lab } from './support.mjs';
import { openFromHub, removeStoredModel, storedModels } from '../../web/models/hub_store.js';
import { openCheckpoint } from '../../web/models/registry.js';
import * as modelHub from './model_hub.mjs';

after(closeHostileHub);
after(modelHub.closeModelHub);
const module = await lab('simd');

/** openFromHub as the worker calls it (the module's config check) -> {result} or {error}, and the models then kept. */
async function open(spec, { caches = new MemoryCacheStorage(), lab: labId = 'pretrained', ...options } = {}) {
  const [id, revision = 'main'] = spec.split('@');
  let outcome;
  try {
    outcome = { result: await openFromHub({ id, revision, endpoint: options.endpoint ?? ENDPOINT, lab: labId, caches, checkConfig: (kind, config) => module.checkConfig(kind, config), ...options }) };
  } catch (error) {
    outcome = { error };
  }
  return { ...outcome, kept: await storedModels({ caches }), caches };
}

/**
 * Node's fetch as a browser's, for shards whose size the Hub does not say: the stand-in's CDN (a path of
 * the Hub's own server) answers a HEAD with the file's Content-Length, which a real CDN behind a Hub
 * without X-Linked-Size would also give; here it is left out, as the Hub's own answer leaves it.
 */
const withoutCdnSize = async (url, init) => {
  const response = await fetch(url, init);
  if (init?.method !== 'HEAD' || !/safetensors$/.test(url) || /index\.json$/.test(url)) return response;
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  return new Response(null, { status: response.status, headers });
};

/** A refusal: its HubError's sentence, and nothing kept. */
async function refused(spec, message, options) {
  const { error, kept } = await open(spec, options);
  assert.equal(error?.name, 'HubError', `${spec}: ${error?.stack ?? 'opened'}`);
  if (message instanceof RegExp) assert.match(error.message, message);
  else assert.equal(error.message, message);
  assert.deepEqual(kept, [], `${spec}: nothing kept`);
}

test('the Hub\'s X-Error-Code refusals in the page\'s words (the Token field)', async () => {
  await refused('test-org/hidden', `test-org/hidden: no such model on ${ENDPOINT}, or a private one: give a token with access (the Token field)`);
  await refused('test-org/gated-bert', `test-org/gated-bert is gated: accept its conditions on its page (${ENDPOINT}/test-org/gated-bert) with your account, `
    + 'then give that account\'s token (the Token field)');
  await refused('test-org/bert-tiny@v9', 'test-org/bert-tiny has no revision "v9" (a branch, tag or commit)');
});

test('a gated model opens with its token, which never reaches the CDN; the model is kept and opens again with no request', async () => {
  cdnRequests.length = 0;
  const { result, kept, caches } = await open('test-org/gated-bert', { token: 'hf_secret' });
  assert.equal(result?.kind.kind, 'bert');
  assert.deepEqual(result.sources.map((s) => s.name), ['config.json', 'vocab.txt', 'model.safetensors'], 'the files of the plan, in its order');
  assert.ok(cdnRequests.length > 0, 'the weights came from the CDN');
  assert.deepEqual(cdnRequests.map((q) => q.authorization), cdnRequests.map(() => null), 'no Authorization header crossed to the CDN');
  assert.deepEqual(kept.map((m) => [m.id, m.files.sort(), m.partial]), [['test-org/gated-bert', ['config.json', 'model.safetensors', 'vocab.txt'], false]]);
  // The kept copy opens with no network, and the one opener reads it as the CLI reads its folder.
  const before = hubRequests.length;
  const again = await open('test-org/gated-bert', { caches });
  assert.equal(again.result.fromCache, true);
  assert.equal(hubRequests.length, before, 'no request');
  const { opened } = await openCheckpoint(module, again.result.sources, { lab: 'pretrained' });
  assert.equal(opened.model.config.layers, 2);
  opened.model.delete();
});

test('a redirect loop, a 100 MB config.json, compressed bodies that inflate and 10 GiB of weights are refused, nothing kept', async () => {
  await refused('test-org/loop-bert', `test-org/loop-bert: model.safetensors redirects in a loop at ${ENDPOINT}: is it a Hugging Face endpoint (Hub settings)?`);
  await refused('test-org/huge-config', 'test-org/huge-config: config.json is 100 MB, more than a config.json can be (at most 1 MB); nothing of it was kept');
  for (const id of ['test-org/gzip-sized', 'test-org/gzip-unsized']) {
    await refused(id, `${id}: more than 1 MB of config.json arrived, more than a config.json can be (at most 1 MB); nothing of it was kept`);
  }
  cdnRequests.length = 0;
  await refused('test-org/huge-weights', 'test-org/huge-weights: model.safetensors is 10240 MB: its weights need at least that much memory, more than the 3840 MB a lab holds '
    + '(a browser tab\'s WebAssembly memory beside its work); nothing of it was downloaded or kept');
  assert.deepEqual(cdnRequests.filter((q) => q.url.startsWith('/huge/')).map((q) => q.method), ['HEAD'], 'the weights\' body was never asked for');
});

test('the module\'s check of config.json runs before any other file: a model too large is refused after config.json alone', async () => {
  const before = hubRequests.length;
  cdnRequests.length = 0;
  await refused('test-org/too-large-model', /^test-org\/too-large-model: config\.json describes a model that needs \d+ MB: .*; nothing of its weights was downloaded$/);
  assert.deepEqual(hubRequests.slice(before).map((q) => `${q.method} ${q.url.split('/').pop()}`), ['GET config.json']);
  assert.deepEqual(cdnRequests, []);
});

test('another lab\'s kind is refused after its config.json, naming the lab that opens it', async () => {
  const { error } = await open('test-org/bert-tiny', { lab: 'writing' });
  assert.equal(error.message, 'test-org/bert-tiny: it is a BERT model (config.json\'s model_type is "bert"), not a GPT-2, Llama, Qwen2 or TransformerLens one '
    + '(only its config.json was downloaded): open it in the Pretrained lab.');
  assert.equal(error.lab.id, 'pretrained', 'the page links to the lab');
});

test('renamed repositories: the relative 307 is followed, and the model is kept under the id typed', async () => {
  const { result, kept } = await open('bert-base-uncased');
  assert.equal(result?.kind.kind, 'bert');
  assert.deepEqual(kept.map((m) => m.id), ['bert-base-uncased']);
  const gpt2 = await open('gpt2', { lab: 'writing' });
  assert.deepEqual(gpt2.result.sources.map((s) => s.name), ['config.json', 'vocab.json', 'merges.txt', 'model.safetensors'],
    'no tokenizer.json on the Hub: GPT-2\'s vocab.json + merges.txt, the second alternative');
});

test('a body of one byte every 5 s stalls; its whole parts are kept, and the next open goes on from them', async () => {
  setTrickle(true);
  const caches = new MemoryCacheStorage();
  const partBytes = 4096;
  const first = await open('test-org/trickle-bert', { caches, partBytes, stallSeconds: 1 });
  assert.match(first.error?.message ?? '', /^test-org\/trickle-bert: the download of model\.safetensors stalled: less than 1024 bytes arrived in 1 s, 3 times; .* that arrived whole are kept: open it again to go on from there$/);
  assert.deepEqual(first.kept.map((m) => [m.id, m.stalled]), [['test-org/trickle-bert', true]], 'listed as stalled');
  setTrickle(false);
  cdnRequests.length = 0;
  const second = await open('test-org/trickle-bert', { caches, partBytes });
  assert.equal(second.result?.kind.kind, 'bert', second.error?.message);
  const source = second.result.sources.find((s) => s.name === 'model.safetensors');
  assert.deepEqual(Buffer.from(await source.read(0, source.size)), weights, 'the weights whole');
  assert.equal(await removeStoredModel({ id: 'test-org/trickle-bert', revision: 'main', endpoint: ENDPOINT }, { caches }), 3);
});

// The model downloads' stand-in (model_hub.mjs, the CLI's in hub_cli.test.mjs): sharded models, hostile indexes, shards without a size.
test('a sharded model: the index, each shard once, and refusals before any shard: a path for a name, a shard of no size', async () => {
  modelHub.requests.length = 0;
  const { result } = await open('test-org/llama-sharded', { lab: 'writing', endpoint: modelHub.ENDPOINT });
  assert.deepEqual(result?.sources.map((s) => s.name), ['config.json', 'vocab.json', 'merges.txt', ...modelHub.SHARD_FILES]);
  for (const shard of modelHub.SHARD_FILES.slice(1)) {
    assert.equal(modelHub.requests.filter((q) => q.startsWith('GET /cdn/') && q.split(' ')[1].endsWith(`/${shard}`)).length, 1, `${shard} fetched once`);
  }
  const { opened } = await openCheckpoint(module, result.sources, { lab: 'writing' });
  assert.equal(opened.model.config.layers, 2);
  opened.model.delete();
  modelHub.requests.length = 0;
  await refused('test-org/llama-sharded-hostile', 'test-org/llama-sharded-hostile: model.safetensors.index.json: shard "../../secret.safetensors" names a folder: '
    + 'a shard is a plain file name beside the index', { lab: 'writing', endpoint: modelHub.ENDPOINT });
  assert.deepEqual(modelHub.requests.filter((q) => q.includes('/cdn/')), [], 'no shard asked for');
  for (const id of ['test-org/llama-sharded-nosize', 'test-org/llama-sharded-negative', 'test-org/llama-sharded-exponent']) {
    modelHub.requests.length = 0;
    await refused(id, `${id}: the Hub's answer for the shard ${modelHub.SHARD_FILES[1]} gives no size (X-Linked-Size or Content-Length), `
      + 'so the shards cannot be summed against the memory a lab holds before they are downloaded; nothing of them was downloaded',
    { lab: 'writing', endpoint: modelHub.ENDPOINT, fetch: withoutCdnSize });
    assert.deepEqual(modelHub.requests.filter((q) => q.startsWith('GET /cdn/')), [], `${id}: no shard's body asked for`);
  }
});

test('by id as from a folder: a decoder brings tokenizer_config.json and generation_config.json where the Hub has them; Marian falls back to pytorch_model.bin', async () => {
  const chat = await open('test-org/gpt2-chat', { lab: 'writing', endpoint: modelHub.ENDPOINT });
  assert.deepEqual(chat.result?.sources.map((s) => s.name), ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'generation_config.json', 'model.safetensors'],
    'tokenizer.json, the first alternative: vocab.json and merges.txt are not fetched');
  const marian = await open('test-org/opus-mt-tiny', { lab: 'translation', endpoint: modelHub.ENDPOINT });
  assert.deepEqual(marian.result?.sources.map((s) => s.name), ['config.json', 'source.spm', 'target.spm', 'vocab.json', 'pytorch_model.bin']);
  await refused('test-org/bad-config', 'test-org/bad-config: its config.json is not JSON', { endpoint: modelHub.ENDPOINT });
  await refused('test-org/private-bert', /^test-org\/private-bert: the Hub refused config\.json \(HTTP 401\): a gated or private model needs a token with access \(the Token field\)$/,
    { endpoint: modelHub.ENDPOINT });
});
