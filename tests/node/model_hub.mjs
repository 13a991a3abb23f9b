// The stand-in Hub of the model downloads (issues 25, 37 and 48) on 127.0.0.1, for both Hub clients'
// tests (hub_cli.test.mjs drives the CLI against it, hub_store_node.test.mjs the page's client). It answers
// as huggingface.co does: resolve URLs; small files with their ETag; the weights behind a redirect to a
// "CDN" (here, /cdn/ on the same server), named by X-Linked-Etag = their sha256 and X-Linked-Size;
// X-Repo-Commit; 401 for a private model without a token; 404 for what is not there. Importing it starts
// the server; closeModelHub() stops it. `requests` lists every request ("GET /url bytes=N-").
import { createHash } from 'node:crypto';
import http from 'node:http';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { FIXTURES } from './support.mjs';

const BERT = path.join(FIXTURES, 'bert_tiny', 'modern');
const MARIAN = path.join(FIXTURES, 'marian_tiny');
const SHARDED = path.join(FIXTURES, 'llama_tiny_sharded');
const SHARD_FILES = ['model.safetensors.index.json', 'model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors'];
const HOSTILE_INDEX = (() => {
  const index = JSON.parse(readFileSync(path.join(SHARDED, SHARD_FILES[0]), 'utf8'));
  index.weight_map['lm_head.weight'] = '../../secret.safetensors';
  return JSON.stringify(index);
})();
const GPT2_CHAT = path.join(FIXTURES, 'gpt2_tiny', 'chat');
const COMMIT = 'c0ffee'.padEnd(40, '0');
const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');
const sha1 = (bytes) => createHash('sha1').update(bytes).digest('hex');

// The stand-in Hub's models: id -> {folder, files, private?, broken? (the CDN cuts the first download of
// the weights short; later ones, asked with a Range, get the rest), ignoresRange? (then answers a Range
// with the whole file, 200), corrupt?, configText?}.
const MODELS = {
  'test-org/bert-tiny': { folder: BERT, files: ['config.json', 'vocab.txt', 'model.safetensors'] },
  'test-org/private-bert': { folder: BERT, files: ['config.json', 'vocab.txt', 'model.safetensors'], private: true },
  'test-org/broken-bert': { folder: BERT, files: ['config.json', 'vocab.txt', 'model.safetensors'], broken: true },
  'test-org/rangeless-bert': { folder: BERT, files: ['config.json', 'vocab.txt', 'model.safetensors'], broken: true, ignoresRange: true },
  'test-org/corrupt-bert': { folder: BERT, files: ['config.json', 'vocab.txt', 'model.safetensors'], corrupt: true },
  'test-org/bad-config': { folder: path.join(FIXTURES, 'spm'), files: ['config.json'], configText: '{"model_type": ' },
  'test-org/opus-mt-tiny': { folder: MARIAN, files: ['config.json', 'source.spm', 'target.spm', 'vocab.json', 'pytorch_model.bin'] },
  // Issue 37: a sharded llama (model.safetensors.index.json and two shards), one whose index names a shard
  // by a path, and gpt2-kind models with and without a chat template's files.
  'test-org/llama-sharded': { folder: SHARDED, files: ['config.json', 'vocab.json', 'merges.txt', ...SHARD_FILES] },
  'test-org/llama-sharded-hostile': { folder: SHARDED, files: ['config.json', 'vocab.json', 'merges.txt', ...SHARD_FILES], indexText: HOSTILE_INDEX },
  // Issue 48: shards whose HEAD gives no usable size (none, negative, "1e3"): counted as 0, they once let
  // five 800 MB shards past the budget.
  'test-org/llama-sharded-nosize': { folder: SHARDED, files: ['config.json', 'vocab.json', 'merges.txt', ...SHARD_FILES], linkedSize: null },
  'test-org/llama-sharded-negative': { folder: SHARDED, files: ['config.json', 'vocab.json', 'merges.txt', ...SHARD_FILES], linkedSize: '-5' },
  'test-org/llama-sharded-exponent': { folder: SHARDED, files: ['config.json', 'vocab.json', 'merges.txt', ...SHARD_FILES], linkedSize: '1e3' },
  'test-org/gpt2-chat': { folder: GPT2_CHAT, files: ['config.json', 'vocab.json', 'merges.txt', 'tokenizer.json', 'tokenizer_config.json', 'generation_config.json', 'model.safetensors'] },
  'test-org/gpt2-plain': { folder: path.join(FIXTURES, 'gpt2_tiny', 'hub'), files: ['config.json', 'vocab.json', 'merges.txt', 'model.safetensors'] },
};
const LARGE = new Set(['model.safetensors', 'pytorch_model.bin', ...SHARD_FILES.slice(1)]);
const requests = [];
const brokenOnce = new Set(); // the broken models whose first download was cut short

const server = http.createServer((req, res) => {
  requests.push(`${req.method} ${req.url}${req.headers.range ? ` ${req.headers.range}` : ''}`);
  const cdn = req.url.match(/^\/cdn\/([^/]+)\/(.+)$/);
  if (cdn) {
    const [, id, file] = cdn.map(decodeURIComponent);
    const model = MODELS[id];
    const bytes = readFileSync(path.join(model.folder, file));
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    if (range && !model.ignoresRange && req.method !== 'HEAD') {
      const from = Number(range[1]);
      res.writeHead(206, { 'content-length': bytes.length - from, 'content-range': `bytes ${from}-${bytes.length - 1}/${bytes.length}` });
      return res.end(bytes.subarray(from));
    }
    res.writeHead(200, { 'content-length': bytes.length, etag: '"cdn-etag-not-the-blob-name"' });
    if (req.method === 'HEAD') return res.end();
    if (model.corrupt) return res.end(Buffer.from(bytes).fill(7, 100, 200)); // whole, but not the bytes the Hub named
    if (model.broken && !brokenOnce.has(id)) {
      brokenOnce.add(id);
      res.write(bytes.subarray(0, bytes.length >> 1));
      return setTimeout(() => res.socket.destroy(), 20);
    }
    return res.end(bytes);
  }
  const m = req.url.match(/^\/(.+)\/resolve\/([^/]+)\/([^/]+)$/);
  const model = m && MODELS[decodeURIComponent(m[1])];
  if (!model) return res.writeHead(404).end('Repository not found');
  if (model.private && req.headers.authorization !== 'Bearer hf_secret') return res.writeHead(401).end('Unauthorized');
  const file = decodeURIComponent(m[3]);
  if (!model.files.includes(file)) return res.writeHead(404, { 'x-repo-commit': COMMIT }).end('Entry not found');
  const bytes = model.configText && file === 'config.json' ? Buffer.from(model.configText)
    : model.indexText && file === SHARD_FILES[0] ? Buffer.from(model.indexText) : readFileSync(path.join(model.folder, file));
  if (LARGE.has(file)) {
    const linkedSize = 'linkedSize' in model && file !== SHARD_FILES[0] ? model.linkedSize : bytes.length;
    res.writeHead(302, { location: `${ENDPOINT}/cdn/${encodeURIComponent(m[1])}/${file}`, 'x-repo-commit': COMMIT, 'x-linked-etag': `"${sha256(bytes)}"`,
      ...(linkedSize === null ? {} : { 'x-linked-size': linkedSize }) });
    return res.end();
  }
  res.writeHead(200, { 'x-repo-commit': COMMIT, etag: `"${sha1(bytes)}"`, 'content-length': bytes.length });
  return res.end(req.method === 'HEAD' ? undefined : bytes);
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const ENDPOINT = `http://127.0.0.1:${server.address().port}`;

export { BERT, MARIAN, SHARDED, SHARD_FILES, GPT2_CHAT, COMMIT, ENDPOINT, MODELS, requests, sha1, sha256 };

export const closeModelHub = () => server.close();
