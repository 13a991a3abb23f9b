// The Hub's refusals and a hostile or broken Hub, for attnlab --model ID (issue 25): a stand-in Hub on
// 127.0.0.1 answers with the Hub's X-Error-Code header (RepoNotFound for an unknown or private repo seen
// without a token, GatedRepo, RevisionNotFound, EntryNotFound), serves the weights from a CDN on another
// origin (which must never see the token), redirects in a loop, and changes a file's size between two
// requests. Each case ends in its sentence (exit 2), with nothing in the cache that looks whole.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import http from 'node:http';
import { existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FIXTURES } from './support.mjs';
import { REPO_ROOT } from '../../web/node_loader.mjs';
import { hubRefusal } from '../../web/models/hub_ids.js';

const CLI = path.join(REPO_ROOT, 'web', 'cli', 'attnlab.mjs');
const BERT = path.join(FIXTURES, 'bert_tiny', 'modern');
const COMMIT = 'feed'.padEnd(40, '0');
const FILES = ['config.json', 'vocab.txt', 'model.safetensors'];
const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');
const weights = readFileSync(path.join(BERT, 'model.safetensors'));

// The CDN: another origin. It records whether a token reached it.
const cdnRequests = [];
const cdn = http.createServer((req, res) => {
  cdnRequests.push({ url: req.url, authorization: req.headers.authorization ?? null });
  const grown = req.url.includes('changing');
  const bytes = grown ? Buffer.concat([weights, Buffer.alloc(16)]) : weights;
  res.writeHead(200, { 'content-length': bytes.length });
  res.end(req.method === 'HEAD' ? undefined : bytes);
});
await new Promise((resolve) => cdn.listen(0, '127.0.0.1', resolve));
const CDN = `http://127.0.0.1:${cdn.address().port}`;

const hub = http.createServer((req, res) => {
  const m = req.url.match(/^\/(.+)\/resolve\/([^/]+)\/([^/]+)$/);
  if (req.url.startsWith('/loop/')) return res.writeHead(302, { location: req.url }).end();
  if (!m) return res.writeHead(404).end();
  const [id, revision, file] = [decodeURIComponent(m[1]), decodeURIComponent(m[2]), decodeURIComponent(m[3])];
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
const ENDPOINT = `http://127.0.0.1:${hub.address().port}`;
after(() => {
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
