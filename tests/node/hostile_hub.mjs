// The stand-in hostile Hub of issue 25, 35 and 48 on 127.0.0.1, for both Hub clients' tests
// (hub_hostile.test.mjs drives the CLI against it, hub_store_node.test.mjs the page's client): it answers
// with the Hub's X-Error-Code header (RepoNotFound for an unknown or private repo seen without a token,
// GatedRepo, RevisionNotFound, EntryNotFound), serves the weights from a CDN on another origin (which must
// never see the token), redirects in a loop, changes a file's size between two requests, renames
// repositories with a relative 307 (bert-base-uncased -> google-bert/bert-base-uncased, gpt2 ->
// openai-community/gpt2), gives ETags "." and "..", compressed bodies that inflate past what was announced
// (with and without a size in the HEAD), a 100 MB config.json, a 10 GiB weights file, a body of one byte
// every 5 s, and a redirect to file:. Importing it starts the two servers; closeHostileHub() stops them.
import { createHash } from 'node:crypto';
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import path from 'node:path';
import { FIXTURES } from './support.mjs';

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
let trickle = true; // test-org/trickle-bert's CDN sends a byte every 5 s while this holds (setTrickle)
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
  // 10 GiB, as the CDN would say it in its HEAD (what a browser's fetch sees behind the redirect); its body is never asked for.
  if (req.url.startsWith('/huge/') && req.method === 'HEAD') return res.writeHead(200, { 'content-length': 10 * 2 ** 30 }).end();
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
    case 'test-org/huge-config': { // 100 MB announced and sent (100 chunks of 1 MB: web/shared/megabytes.js's MB)
      res.writeHead(200, { ...ok, 'content-length': 100 * 2 ** 20 });
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

export { BERT, COMMIT, FILES, GPT2, CDN, ENDPOINT, weights, sha256, hubRequests, cdnRequests, trickling };

/** Whether test-org/trickle-bert's CDN sends a byte every 5 s (true) or the rest at once. */
export function setTrickle(on) {
  trickle = on;
}

export function closeHostileHub() {
  for (const res of trickling) res.destroy();
  hub.close();
  cdn.close();
}
