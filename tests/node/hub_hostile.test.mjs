// The Hub's refusals and a hostile or broken Hub, for attnlab --model ID (issue 25): a stand-in Hub on
// 127.0.0.1 answers with the Hub's X-Error-Code header (RepoNotFound for an unknown or private repo seen
// without a token, GatedRepo, RevisionNotFound, EntryNotFound), serves the weights from a CDN on another
// origin (which must never see the token), redirects in a loop, and changes a file's size between two
// requests. Each case ends in its sentence (exit 2), with nothing in the cache that looks whole.
//
// Issue 35 adds what the real Hub does to renamed repositories and what a hostile server might send:
// a relative 307 on the old id (bert-base-uncased -> google-bert/bert-base-uncased, gpt2 ->
// openai-community/gpt2), ETags "." and "..", revisions that are not ref names, compressed bodies that
// inflate past what was announced (with and without a size in the HEAD), a 100 MB config.json, a 10 GiB
// weights file, and a body of one byte every 5 s. Each case's exit code, message, time (bounded loosely:
// the stand-in would take far longer if the case were not stopped) and what the cache keeps are asserted.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import http from 'node:http';
import { existsSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FIXTURES } from './support.mjs';
import { REPO_ROOT } from '../../web/node_loader.mjs';
import { hubRefusal } from '../../web/models/hub_ids.js';
import { MAX_WEIGHT_BYTES } from '../../web/models/checkpoint_files.js';

const CLI = path.join(REPO_ROOT, 'web', 'cli', 'attnlab.mjs');
const BERT = path.join(FIXTURES, 'bert_tiny', 'modern');
const COMMIT = 'feed'.padEnd(40, '0');
const FILES = ['config.json', 'vocab.txt', 'model.safetensors'];
const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');
const weights = readFileSync(path.join(BERT, 'model.safetensors'));
const GPT2 = path.join(FIXTURES, 'gpt2_tiny', 'hub');
const GPT2_FILES = ['config.json', 'vocab.json', 'merges.txt', 'model.safetensors'];
// Renamed repositories, as the Hub answers them today: the old id's every URL is a relative 307 to the new one.
const RENAMED = { 'bert-base-uncased': 'google-bert/bert-base-uncased', gpt2: 'openai-community/gpt2' };
const folderOf = (id) => (id === 'openai-community/gpt2' ? GPT2 : BERT);
const filesOf = (id) => (id === 'openai-community/gpt2' ? GPT2_FILES : FILES);
// 64 MiB of zeros compress to 64 KB: a body that inflates 1,000-fold.
const bomb = gzipSync(Buffer.alloc(64 << 20));
const hubRequests = [];
let trickle = true; // test-org/trickle-bert's CDN sends a byte every 5 s while this holds
const trickling = new Set();

// The CDN: another origin. It records whether a token reached it.
const cdnRequests = [];
const cdn = http.createServer((req, res) => {
  cdnRequests.push({ url: req.url, method: req.method, authorization: req.headers.authorization ?? null, range: req.headers.range ?? null });
  if (req.url.startsWith('/gpt2/')) {
    const bytes = readFileSync(path.join(GPT2, 'model.safetensors'));
    res.writeHead(200, { 'content-length': bytes.length });
    return res.end(req.method === 'HEAD' ? undefined : bytes);
  }
  if (req.url.startsWith('/trickle/') && req.method === 'GET') {
    const from = Number(/^bytes=(\d+)-$/.exec(req.headers.range ?? '')?.[1] ?? 0);
    const head = from ? { 'content-range': `bytes ${from}-${weights.length - 1}/${weights.length}` } : {};
    res.writeHead(from ? 206 : 200, { 'content-length': weights.length - from, ...head });
    if (!trickle) return res.end(weights.subarray(from));
    res.write(weights.subarray(from, from + 100));
    let at = from + 100;
    trickling.add(res);
    const timer = setInterval(() => {
      if (res.destroyed) return clearInterval(timer);
      res.write(weights.subarray(at, at + 1));
      at += 1;
    }, 5000);
    res.on('close', () => { clearInterval(timer); trickling.delete(res); });
    return undefined;
  }
  const grown = req.url.includes('changing');
  const bytes = grown ? Buffer.concat([weights, Buffer.alloc(16)]) : weights;
  res.writeHead(200, { 'content-length': bytes.length });
  res.end(req.method === 'HEAD' ? undefined : bytes);
});
await new Promise((resolve) => cdn.listen(0, '127.0.0.1', resolve));
const CDN = `http://127.0.0.1:${cdn.address().port}`;

const hub = http.createServer((req, res) => {
  hubRequests.push({ method: req.method, url: req.url, authorization: req.headers.authorization ?? null, encoding: req.headers['accept-encoding'] ?? null });
  const m = req.url.match(/^\/(.+)\/resolve\/([^/]+)\/([^/]+)$/);
  if (req.url.startsWith('/loop/')) return res.writeHead(302, { location: req.url }).end();
  if (!m) return res.writeHead(404).end();
  const [id, revision, file] = [decodeURIComponent(m[1]), decodeURIComponent(m[2]), decodeURIComponent(m[3])];
  if (RENAMED[id]) return res.writeHead(307, { location: `/${RENAMED[id]}/resolve/${m[2]}/${m[3]}` }).end();
  const hostile = hostileAnswer(id, file, req, res);
  if (hostile !== false) return hostile;
  if (id === 'openai-community/gpt2' || id === 'google-bert/bert-base-uncased') {
    if (!filesOf(id).includes(file)) return res.writeHead(404, { 'x-error-code': 'EntryNotFound', 'x-repo-commit': COMMIT }).end();
    const bytes = readFileSync(path.join(folderOf(id), file));
    if (file === 'model.safetensors') {
      const location = id === 'openai-community/gpt2' ? `${CDN}/gpt2/${file}` : `${CDN}/same/${file}`;
      return res.writeHead(302, { location, 'x-repo-commit': COMMIT, 'x-linked-etag': `"${sha256(bytes)}"`, 'x-linked-size': bytes.length }).end();
    }
    res.writeHead(200, { 'x-repo-commit': COMMIT, etag: `"${createHash('sha1').update(bytes).digest('hex')}"`, 'content-length': bytes.length });
    return res.end(req.method === 'HEAD' ? undefined : bytes);
  }
  const refuse = (status, code) => res.writeHead(status, { 'x-error-code': code, 'x-error-message': code }).end(code);
  const authorized = req.headers.authorization === 'Bearer hf_secret';
  if (id === 'test-org/hidden') return refuse(401, 'RepoNotFound');
  if (id === 'test-org/gated-bert' && !authorized) return refuse(401, 'GatedRepo');
  if (revision !== 'main') return refuse(404, 'RevisionNotFound');
  if (!FILES.includes(file)) return res.writeHead(404, { 'x-error-code': 'EntryNotFound', 'x-repo-commit': COMMIT }).end();
  if (file === 'model.safetensors') {
    const location = id === 'test-org/loop-bert' ? `/loop/${file}` : `${CDN}/${id.endsWith('changing-bert') ? 'changing' : 'same'}/${file}`;
    return res.writeHead(302, { location, 'x-repo-commit': COMMIT, 'x-linked-etag': `"${sha256(weights)}"`, 'x-linked-size': weights.length }).end();
  }
  const bytes = readFileSync(path.join(BERT, file));
  res.writeHead(200, { 'x-repo-commit': COMMIT, etag: `"${createHash('sha1').update(bytes).digest('hex')}"`, 'content-length': bytes.length });
  return res.end(req.method === 'HEAD' ? undefined : bytes);
});
await new Promise((resolve) => hub.listen(0, '127.0.0.1', resolve));

// The hostile answers, by id -> handled (anything but false), or false for the ordinary ones.
function hostileAnswer(id, file, req, res) {
  const config = readFileSync(path.join(BERT, 'config.json'));
  const ok = { 'x-repo-commit': COMMIT, etag: `"${createHash('sha1').update(config).digest('hex')}"` };
  switch (id) {
    case 'test-org/too-large-model': { // a config.json of 24 layers 8192 wide: 8 GB of weights as float32
      if (file !== 'config.json') return false;
      const large = Buffer.from(JSON.stringify({ ...JSON.parse(config), hidden_size: 8192, intermediate_size: 32768, num_hidden_layers: 24, num_attention_heads: 64 }));
      res.writeHead(200, { ...ok, etag: `"${createHash('sha1').update(large).digest('hex')}"`, 'content-length': large.length });
      return res.end(req.method === 'HEAD' ? undefined : large);
    }
    case 'test-org/dot-etag': case 'test-org/dotdot-etag':
      return res.writeHead(200, { ...ok, etag: id.includes('dotdot') ? '".."' : '"."', 'content-length': config.length }).end(req.method === 'HEAD' ? undefined : config);
    case 'test-org/gzip-sized': // the HEAD gives the size; the body comes compressed anyway and inflates to 64 MiB
      if (req.method === 'HEAD') return res.writeHead(200, { ...ok, 'content-length': config.length }).end();
      return res.writeHead(200, { ...ok, 'content-encoding': 'gzip', 'content-length': bomb.length }).end(bomb);
    case 'test-org/gzip-unsized': // no size anywhere: the body, chunked and compressed, inflates to 64 MiB
      if (req.method === 'HEAD') return res.writeHead(200, ok).end();
      res.writeHead(200, { ...ok, 'content-encoding': 'gzip' });
      return res.end(bomb);
    case 'test-org/huge-config': { // 100 MB announced and sent
      res.writeHead(200, { ...ok, 'content-length': 100e6 });
      if (req.method === 'HEAD') return res.end();
      const chunk = Buffer.alloc(1 << 20, 0x20);
      let sent = 0;
      const more = () => { while (sent < 100 && !res.destroyed && res.write(chunk)) sent++; if (sent >= 100) res.end(); };
      res.on('drain', more);
      return more();
    }
    case 'test-org/file-redirect': { // the weights' redirect points at this machine's files (issue 48)
      if (file !== 'model.safetensors') return false;
      return res.writeHead(302, { location: 'file:///etc/passwd', 'x-repo-commit': COMMIT, 'x-linked-etag': `"${sha256(weights)}"`,
        'x-linked-size': weights.length }).end();
    }
    case 'test-org/huge-weights': case 'test-org/trickle-bert': {
      if (file !== 'model.safetensors') return false;
      const huge = id === 'test-org/huge-weights';
      return res.writeHead(302, { location: `${CDN}/${huge ? 'huge' : 'trickle'}/${file}`, 'x-repo-commit': COMMIT,
        'x-linked-etag': `"${sha256(huge ? Buffer.alloc(0) : weights)}"`, 'x-linked-size': huge ? 10 * 2 ** 30 : weights.length }).end();
    }
    default:
      return false;
  }
}
const ENDPOINT = `http://127.0.0.1:${hub.address().port}`;
after(() => {
  for (const res of trickling) res.destroy();
  hub.close();
  cdn.close();
});

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
  assert.equal(r.stderr, 'attnlab: test-org/huge-config: config.json is 100.0 MB, more than a config.json can be (at most 1 MB); nothing of it was kept\n');
  assert.deepEqual(blobsOf('test-org/huge-config'), []);
  cdnRequests.length = 0;
  r = await run('test-org/huge-weights');
  assert.equal(r.code, 2);
  assert.equal(r.stderr, 'attnlab: test-org/huge-weights: model.safetensors is 10737.4 MB: its weights need at least that much memory, more than the 3840 MB a lab holds '
    + '(a browser tab\'s WebAssembly memory beside its work); nothing of it was downloaded or kept\n');
  assert.deepEqual(cdnRequests.filter((q) => q.url.startsWith('/huge/')), [], 'the weights\' body was never asked for');
  assert.ok(!blobsOf('test-org/huge-weights').some((f) => f.length === 64 || f.endsWith('.incomplete')));
});

test('a body of one byte every 5 s is stopped as stalled after HF_HUB_DOWNLOAD_TIMEOUT, keeps its part, and the next run resumes it', async () => {
  trickle = true;
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
  trickle = false;
  cdnRequests.length = 0;
  r = await run('test-org/trickle-bert');
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(cdnRequests.filter((q) => q.method === 'GET').map((q) => q.range), [`bytes=${kept}-`]);
  assert.equal(sha256(readFileSync(path.join(repo('test-org/trickle-bert'), 'blobs', sha256(weights)))), sha256(weights));
});

test('Ctrl-C during a download leaves the cache sound: the part is kept, no blob, and the next run finishes it', async () => {
  const id = 'test-org/trickle-bert';
  trickle = true;
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
  trickle = false;
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
