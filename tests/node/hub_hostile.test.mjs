// The Hub's refusals and a hostile or broken Hub, for attnlab --model ID (issues 25, 35 and 48): the
// stand-in of hostile_hub.mjs (the page's client meets the same one in hub_store_node.test.mjs, through the
// same plan, web/models/hub_plan.js). Each case ends in its sentence (exit 2), with nothing in the cache
// that looks whole; each case's exit code, message, time (bounded loosely: the stand-in would take far
// longer if the case were not stopped) and what the cache keeps are asserted. Revisions that are not ref
// names are refused before any request.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BERT, COMMIT, ENDPOINT, FILES, GPT2, cdnRequests, closeHostileHub, hubRequests, setTrickle, sha256, trickling, weights } from './hostile_hub.mjs';
import { REPO_ROOT } from '../../web/node_loader.mjs';
import { hubRefusal } from '../../web/models/hub_ids.js';
import { MAX_WEIGHT_BYTES } from '../../web/models/checkpoint_files.js';

const CLI = path.join(REPO_ROOT, 'web', 'cli', 'attnlab.mjs');
after(closeHostileHub);

const attnlab = (args, env) => new Promise((resolve) => {
  execFile(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 120_000, env: { ...process.env, HF_TOKEN: '', ...env } },
    (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }));
});
const cache = mkdtempSync(path.join(tmpdir(), 'attnlab-hub-hostile-'));
const run = (id, env = {}) => attnlab(['pretrained', '--model', id, '--text', 'x', '--backend', 'simd'], { HF_ENDPOINT: ENDPOINT, HF_HUB_CACHE: cache, ...env });
// No blob of the weights in the model's cache, whole or partial.
const noWeights = (id) => {
  const blobs = path.join(cache, `models--${id.replace('/', '--')}`, 'blobs');
  return !existsSync(blobs) || readdirSync(blobs).every((f) => !f.startsWith(sha256(weights)));
};

test('the Hub\'s X-Error-Code refusals each say what is wrong and what to do', async () => {
  let r = await run('test-org/hidden');
  assert.equal(r.code, 2);
  assert.equal(r.stderr, `attnlab: test-org/hidden: no such model on ${ENDPOINT}, or a private one: give a token with access (HF_TOKEN)\n`);
  r = await run('test-org/gated-bert');
  assert.equal(r.stderr, `attnlab: test-org/gated-bert is gated: accept its conditions on its page (${ENDPOINT}/test-org/gated-bert) with your account, then give that account's token (HF_TOKEN)\n`);
  r = await run('test-org/bert-tiny@v9');
  assert.equal(r.stderr, 'attnlab: test-org/bert-tiny has no revision "v9" (a branch, tag or commit)\n');
  // The messages the page shows come from the same function, with its own place for the token.
  assert.equal(hubRefusal({ id: 'a/b', endpoint: 'https://hub', status: 401, errorCode: 'RepoNotFound', token: 'x', tokenWhere: 'the Token field' }),
    'a/b: no such model on https://hub, or a private one the token given cannot see');
  assert.equal(hubRefusal({ id: 'a/b', status: 404, errorCode: 'EntryNotFound' }), null);
});

test('the weights come from a CDN on another origin, which never sees the token', async () => {
  cdnRequests.length = 0;
  const r = await run('test-org/gated-bert', { HF_TOKEN: 'hf_secret' });
  assert.equal(r.code, 0, r.stderr);
  assert.ok(cdnRequests.length > 0, 'the weights came from the CDN');
  assert.deepEqual(cdnRequests.map((q) => q.authorization), cdnRequests.map(() => null), 'no Authorization header crossed to the CDN');
  assert.ok(!noWeights('test-org/gated-bert'), 'the weights are in the cache');
});

test('a redirect loop and a file that changes size between requests end in their sentence, nothing kept', async () => {
  let r = await run('test-org/loop-bert');
  assert.equal(r.code, 2);
  assert.equal(r.stderr, `attnlab: test-org/loop-bert: model.safetensors redirects in a loop at ${ENDPOINT}: is it a Hugging Face endpoint (HF_ENDPOINT)?\n`);
  assert.ok(noWeights('test-org/loop-bert'));
  r = await run('test-org/changing-bert');
  assert.equal(r.code, 2);
  assert.equal(r.stderr, `attnlab: test-org/changing-bert: model.safetensors changed size between two requests (${weights.length} bytes, then ${weights.length + 16}): `
    + 'the model was updated while it downloaded; nothing was kept: run the command again\n');
  assert.ok(noWeights('test-org/changing-bert'));
});

const repo = (id) => path.join(cache, `models--${id.replace('/', '--')}`);
const blobsOf = (id) => (existsSync(path.join(repo(id), 'blobs')) ? readdirSync(path.join(repo(id), 'blobs')) : []);
const timed = async (promise) => {
  const start = Date.now();
  const r = await promise;
  return { ...r, seconds: (Date.now() - start) / 1000 };
};

test('renamed repositories: the relative 307 is followed on the same host, and the model is kept under the id typed', async () => {
  hubRequests.length = 0;
  cdnRequests.length = 0;
  const r = await run('bert-base-uncased', { HF_TOKEN: 'hf_secret' });
  assert.equal(r.code, 0, r.stderr);
  // Every HEAD of the old id led to one of the new id (the commit and ETag came from that answer).
  const heads = hubRequests.filter((q) => q.method === 'HEAD').map((q) => q.url);
  assert.ok(heads.includes('/bert-base-uncased/resolve/main/config.json') && heads.includes('/google-bert/bert-base-uncased/resolve/main/config.json'), heads.join('\n'));
  assert.ok(hubRequests.every((q) => q.encoding === 'identity'), 'Accept-Encoding: identity on every request to the Hub');
  assert.ok(hubRequests.every((q) => q.authorization === 'Bearer hf_secret'), 'the token goes to the same host after a relative redirect');
  assert.ok(cdnRequests.length > 0 && cdnRequests.every((q) => q.authorization === null), 'and never to the CDN');
  // The cache is written under the requested id, as huggingface_hub does.
  assert.equal(readFileSync(path.join(repo('bert-base-uncased'), 'refs', 'main'), 'utf8'), COMMIT);
  assert.equal(readlinkSync(path.join(repo('bert-base-uncased'), 'snapshots', COMMIT, 'model.safetensors')), path.join('..', '..', 'blobs', sha256(weights)));
  assert.ok(!existsSync(repo('google-bert/bert-base-uncased')));
  // GPT-2's old id opens in the Writing lab's command the same way.
  const g = await attnlab(['generate', '--model', 'gpt2', '--text', 'hello', '--max-new-tokens', '3', '--json'], { HF_ENDPOINT: ENDPOINT, HF_HUB_CACHE: cache });
  assert.equal(g.code, 0, g.stderr);
  const local = await attnlab(['generate', '--model', GPT2, '--text', 'hello', '--max-new-tokens', '3', '--json'], {});
  const ids = (out) => JSON.parse(out.split('\n')[0]).generated.ids;
  assert.deepEqual(ids(g.stdout), ids(local.stdout), 'the same tokens as from the folder');
  assert.ok(existsSync(path.join(repo('gpt2'), 'snapshots', COMMIT, 'vocab.json')));
});

test('revisions that are not ref names are refused before any request; ETags "." and ".." never become paths', async () => {
  for (const revision of ['a/.', 'x/', './.', '.hidden', 'a//b', 'v1.lock']) {
    hubRequests.length = 0;
    const r = await run(`test-org/bert-tiny@${revision}`);
    assert.equal(r.code, 2, revision);
    assert.match(r.stderr, new RegExp(`^attnlab: --model test-org/bert-tiny@${revision.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: revision ".*" is not a branch, tag or commit name \\(.+\\)\n$`), r.stderr);
    assert.equal(hubRequests.length, 0, `no request for @${revision}`);
  }
  for (const id of ['test-org/dot-etag', 'test-org/dotdot-etag']) {
    const r = await run(id);
    assert.equal(r.code, 2);
    assert.equal(r.stderr, `attnlab: ${id}: the Hub's answer for config.json has no usable ETag (a sha1 or sha256 of the file): is ${ENDPOINT} a Hugging Face endpoint?\n`);
    assert.deepEqual(blobsOf(id), [], 'nothing written in blobs/');
  }
  // The blobs folder is still a folder that the next model's files go into.
  const r = await run('test-org/bert-tiny');
  assert.equal(r.code, 0, r.stderr);
});

test('sizes: compressed bodies are stopped where they pass what was announced, a 100 MB config.json and a 10 GiB weights file are refused, nothing kept', async () => {
  let r = await timed(run('test-org/gzip-sized'));
  assert.equal(r.code, 2);
  assert.match(r.stderr, /^attnlab: test-org\/gzip-sized: more than the \d+ bytes announced for config\.json arrived \(a compressed answer, or not the file\); nothing of it was kept\n$/);
  assert.deepEqual(blobsOf('test-org/gzip-sized'), []);
  r = await timed(run('test-org/gzip-unsized'));
  assert.equal(r.code, 2);
  assert.equal(r.stderr, 'attnlab: test-org/gzip-unsized: more than 1 MB of config.json arrived, more than a config.json can be (at most 1 MB); nothing of it was kept\n');
  assert.deepEqual(blobsOf('test-org/gzip-unsized'), []);
  r = await run('test-org/huge-config');
  assert.equal(r.code, 2);
  assert.equal(r.stderr, 'attnlab: test-org/huge-config: config.json is 100 MB, more than a config.json can be (at most 1 MB); nothing of it was kept\n');
  assert.deepEqual(blobsOf('test-org/huge-config'), []);
  cdnRequests.length = 0;
  r = await run('test-org/huge-weights');
  assert.equal(r.code, 2);
  assert.equal(r.stderr, 'attnlab: test-org/huge-weights: model.safetensors is 10240 MB: its weights need at least that much memory, more than the 3840 MB a lab holds '
    + '(a browser tab\'s WebAssembly memory beside its work); nothing of it was downloaded or kept\n');
  assert.deepEqual(cdnRequests.filter((q) => q.url.startsWith('/huge/')), [], 'the weights\' body was never asked for');
  assert.ok(!blobsOf('test-org/huge-weights').some((f) => f.length === 64 || f.endsWith('.incomplete')));
});

test('a body of one byte every 5 s is stopped as stalled after HF_HUB_DOWNLOAD_TIMEOUT, keeps its part, and the next run resumes it', async () => {
  setTrickle(true);
  let r = await timed(run('test-org/trickle-bert', { HF_HUB_DOWNLOAD_TIMEOUT: '2' }));
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, new RegExp(`^attnlab: test-org/trickle-bert: the download of model\\.safetensors stalled: less than 1024 bytes arrived in 2 s \\(HF_HUB_DOWNLOAD_TIMEOUT\\); `
    + `(\\d+) bytes are kept as ${sha256(weights)}\\.incomplete: run the command again to go on from there\n$`));
  const kept = Number(/(\d+) bytes are kept/.exec(r.stderr)[1]);
  assert.ok(kept >= 100 && kept < weights.length, `${kept} bytes kept`);
  assert.ok(r.seconds < 60, `stopped after ${r.seconds} s, not after the ${(weights.length * 5 / 86400).toFixed(0)} days the body would take`);
  assert.equal(statSync(path.join(repo('test-org/trickle-bert'), 'blobs', `${sha256(weights)}.incomplete`)).size, kept);
  assert.ok(!blobsOf('test-org/trickle-bert').includes(sha256(weights)), 'no blob that looks whole');
  // A bad setting is named.
  r = await run('test-org/trickle-bert', { HF_HUB_DOWNLOAD_TIMEOUT: 'soon' });
  assert.equal(r.code, 2);
  assert.equal(r.stderr, 'attnlab: HF_HUB_DOWNLOAD_TIMEOUT must be a number of seconds above 0, got "soon"\n');
  // The server is well again: the next run asks for the rest only.
  setTrickle(false);
  cdnRequests.length = 0;
  r = await run('test-org/trickle-bert');
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(cdnRequests.filter((q) => q.method === 'GET').map((q) => q.range), [`bytes=${kept}-`]);
  assert.equal(sha256(readFileSync(path.join(repo('test-org/trickle-bert'), 'blobs', sha256(weights)))), sha256(weights));
});

test('Ctrl-C during a download leaves the cache sound: the part is kept, no blob, and the next run finishes it', async () => {
  const id = 'test-org/trickle-bert';
  setTrickle(true);
  const cache2 = mkdtempSync(path.join(tmpdir(), 'attnlab-hub-sigint-'));
  const child = spawn(process.execPath, [CLI, 'pretrained', '--model', id, '--text', 'x', '--backend', 'simd'],
    { env: { ...process.env, HF_TOKEN: '', HF_ENDPOINT: ENDPOINT, HF_HUB_CACHE: cache2 } });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  // Interrupt once the weights are on their way (their first 100 bytes have been sent).
  while (trickling.size === 0) await new Promise((resolve) => setTimeout(resolve, 50));
  await new Promise((resolve) => setTimeout(resolve, 300));
  child.kill('SIGINT');
  const code = await new Promise((resolve) => child.on('close', (c) => resolve(c)));
  assert.equal(code, 130, stderr);
  assert.match(stderr, new RegExp(`attnlab: interrupted: \\d+ bytes of model\\.safetensors are kept as ${sha256(weights)}\\.incomplete; run the command again to go on from there\n$`));
  const blobs = readdirSync(path.join(cache2, 'models--test-org--trickle-bert', 'blobs'));
  assert.ok(blobs.includes(`${sha256(weights)}.incomplete`) && !blobs.includes(sha256(weights)), blobs.join(', '));
  assert.ok(!existsSync(path.join(cache2, 'models--test-org--trickle-bert', 'refs', 'main')), 'no ref to a snapshot that is not whole');
  setTrickle(false);
  const r = await attnlab(['pretrained', '--model', id, '--text', 'x', '--backend', 'simd'], { HF_ENDPOINT: ENDPOINT, HF_HUB_CACHE: cache2 });
  assert.equal(r.code, 0, r.stderr);
});

test('the Hub clients\' weights limit is the one the model checks apply (core/models/model_memory.h)', async () => {
  const folder = mkdtempSync(path.join(tmpdir(), 'attnlab-huge-bert-'));
  for (const f of FILES) writeFileSync(path.join(folder, f), readFileSync(path.join(BERT, f)));
  const config = JSON.parse(readFileSync(path.join(BERT, 'config.json'), 'utf8'));
  writeFileSync(path.join(folder, 'config.json'), JSON.stringify({ ...config, hidden_size: 8192, intermediate_size: 32768, num_hidden_layers: 24, num_attention_heads: 64 }));
  const r = await attnlab(['pretrained', '--model', folder, '--text', 'x'], {});
  assert.equal(r.code, 2);
  const limit = /more than the (\d+) MB a browser tab's WebAssembly memory can hold/.exec(r.stderr)?.[1];
  assert.equal(Number(limit) * 1024 * 1024, MAX_WEIGHT_BYTES, r.stderr);
  // By Hub id: the module's check of config.json (the memory it needs) runs before any other file comes.
  const before = hubRequests.length;
  cdnRequests.length = 0;
  const byId = await run('test-org/too-large-model');
  assert.equal(byId.code, 2);
  assert.match(byId.stderr, /^attnlab: test-org\/too-large-model: config\.json describes a model that needs \d+ MB: \d+ MB of weights as float32 and \d+ MB of work, more than the 3840 MB a browser tab's WebAssembly memory can hold \(4 GB, less 256 MB for the module itself\); nothing of its weights was downloaded\n$/);
  assert.deepEqual(hubRequests.slice(before).map((q) => q.url.split('/').pop()), ['config.json', 'config.json'], 'its HEAD and GET only');
  assert.deepEqual(cdnRequests, []);
});

test('a redirect to a file: URL is named, not "cannot reach"; nothing is kept', async () => {
  const cache = mkdtempSync(path.join(tmpdir(), 'attnlab-hub-'));
  const r = await new Promise((resolve) => execFile(process.execPath, [CLI, 'pretrained', '--model', 'test-org/file-redirect', '--text', 'hi'],
    { encoding: 'utf8', timeout: 120_000, env: { ...process.env, HF_ENDPOINT: ENDPOINT, HF_HUB_CACHE: cache } },
    (error, stdout, stderr) => resolve({ code: error?.code ?? 0, stderr })));
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stderr, 'attnlab: test-org/file-redirect: model.safetensors redirects to a file: URL ("file:///etc/passwd"); the Hub\'s files are fetched over http(s) only\n');
  assert.ok(!existsSync(path.join(cache, 'models--test-org--file-redirect', 'refs')), 'no ref');
});
