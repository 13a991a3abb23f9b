// A model by its Hub id on the page (issue 25, the page's side), against a stand-in Hub on 127.0.0.1
// that answers as huggingface.co does (resolve URLs, the weights behind a redirect, CORS for any
// origin, 401 for a private model without a token). The Pretrained lab opens test-org/bert-tiny by id
// and draws its heads; the model is then kept in the browser and opens again with the Hub gone; the
// list of kept models shows it with its size and Remove forgets it; a private model needs the token;
// Cancel stops a download and keeps nothing of it.
// Issue 35: a renamed repository (the Hub's relative 307 from the old id to the new) opens and is kept
// under the id typed, its token never reaching the CDN on another origin; a part that stalls is asked for
// again, then the download stops, the list says "stalled", and its Open goes on from the parts kept.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startLab, waitConfigured, waitDrawn, TINY_BERT } from './support.mjs';
import { megabytes } from '../../web/shared/megabytes.js';

const FILES = ['config.json', 'vocab.txt', 'model.safetensors', 'tokenizer_config.json'];
// ranges: the CDN answers Range requests (206), as the Hub's does; flaky: and breaks off the first request
// for the part that starts at byte 40,000. The others answer a Range with the whole file (200), as a
// server that does not do ranges would: the page then takes it as the whole file.
// Issue 37: a sharded model (model.safetensors.index.json and two shards: make_sharded_fixtures.py), and
// one whose index names a shard by a path.
const SHARDED_BERT = path.join(TINY_BERT, '..', 'sharded');
const SHARDED_FILES = ['config.json', 'vocab.txt', 'tokenizer_config.json', 'model.safetensors.index.json', 'model-00001-of-00002.safetensors',
  'model-00002-of-00002.safetensors'];
const HOSTILE_INDEX = (() => {
  const index = JSON.parse(readFileSync(path.join(SHARDED_BERT, 'model.safetensors.index.json'), 'utf8'));
  index.weight_map[Object.keys(index.weight_map)[0]] = '../secret.safetensors';
  return JSON.stringify(index);
})();
const hubRequests = []; // method and URL of each request the Hub and its CDN saw
const MODELS = { 'test-org/bert-tiny': {}, 'test-org/private-bert': { private: true }, 'test-org/slow-bert': { slow: true },
  'test-org/bert-sharded': { folder: SHARDED_BERT, files: SHARDED_FILES },
  'test-org/bert-sharded-hostile': { folder: SHARDED_BERT, files: SHARDED_FILES, indexText: HOSTILE_INDEX },
  // A config.json of 24 layers 8192 wide (8 GB as float32): the module's memory rule refuses it before the weights.
  'test-org/too-large-bert': { configText: JSON.stringify({ ...JSON.parse(readFileSync(path.join(TINY_BERT, 'config.json'), 'utf8')),
    hidden_size: 8192, intermediate_size: 32768, num_hidden_layers: 24, num_attention_heads: 64 }) },
  'test-org/flaky-bert': { ranges: true, flaky: true }, 'test-org/changing-bert': { ranges: true, grows: true },
  'test-org/stalling-bert': { ranges: true, stalls: true }, 'test-org/private-bert-v2': { private: true, otherCdn: true } };
// Renamed repositories: every URL of the old id is a relative 307 to the new id's.
const RENAMED = { 'bert-base-uncased': 'test-org/bert-tiny', 'test-org/old-private': 'test-org/private-bert-v2' };
let stalling = true; // stalling-bert's CDN sends 1,000 bytes of the part at 40,000, then nothing, while this holds
const stalledTries = [];
const CORS = { 'access-control-allow-origin': '*', 'access-control-expose-headers': 'content-length, content-range, x-repo-commit, etag' };
const cdnRanges = []; // the Range headers the CDN saw, for flaky-bert
let brokeOff = false;

let hub, endpoint, lab;
// A CDN on another origin, as the Hub's is: it records whether a token reached it.
let otherCdn;
const otherCdnRequests = [];
const cdnServer = http.createServer((req, res) => {
  if (req.method === 'OPTIONS') {
    return res.writeHead(204, { ...CORS, 'access-control-allow-headers': 'authorization, range', 'access-control-allow-methods': 'GET, HEAD' }).end();
  }
  otherCdnRequests.push({ method: req.method, authorization: req.headers.authorization ?? null });
  const bytes = readFileSync(path.join(TINY_BERT, 'model.safetensors'));
  res.writeHead(200, { ...CORS, 'content-type': 'application/octet-stream', 'content-length': bytes.length });
  return res.end(req.method === 'HEAD' ? undefined : bytes);
});
const sockets = new Set();
function startHub(port = 0) {
  const server = http.createServer((req, res) => {
    if (req.method === 'OPTIONS') {
      return res.writeHead(204, { ...CORS, 'access-control-allow-headers': 'authorization, range', 'access-control-allow-methods': 'GET, HEAD' }).end();
    }
    hubRequests.push(`${req.method} ${req.url}`);
    const m0 = /^\/(.+)\/resolve\/([^/]+)\/([^/]+)$/.exec(req.url);
    const renamed = m0 && RENAMED[decodeURIComponent(m0[1])];
    if (renamed) return res.writeHead(307, { ...CORS, location: `/${renamed}/resolve/${m0[2]}/${m0[3]}` }).end();
    const cdn = /^\/cdn\/(.+)\/([^/]+)$/.exec(req.url);
    if (cdn) {
      const model = MODELS[decodeURIComponent(cdn[1])];
      const bytes = readFileSync(path.join(model.folder ?? TINY_BERT, cdn[2]));
      const range = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
      if (model.ranges && range && req.method === 'GET') {
        cdnRanges.push(req.headers.range);
        const [from, to] = [Number(range[1]), Math.min(Number(range[2]), bytes.length - 1)];
        // grows: a new commit made the file longer after the HEAD that announced its size.
        const total = model.grows ? bytes.length + 16 : bytes.length;
        res.writeHead(206, { ...CORS, 'content-length': to - from + 1, 'content-range': `bytes ${from}-${to}/${total}` });
        if (model.stalls && from === 40000 && stalling) {
          stalledTries.push(req.headers.range);
          res.write(bytes.subarray(from, from + 1000));
          return undefined; // and nothing more, the connection held open
        }
        if (model.flaky && from === 40000 && !brokeOff) {
          brokeOff = true;
          res.write(bytes.subarray(from, from + 1000));
          return setTimeout(() => res.socket.destroy(), 50);
        }
        return res.end(bytes.subarray(from, to + 1));
      }
      res.writeHead(200, { ...CORS, 'content-type': 'application/octet-stream', 'content-length': bytes.length });
      if (req.method === 'HEAD') return res.end();
      if (!MODELS[decodeURIComponent(cdn[1])].slow) return res.end(bytes);
      // 1 KB every 40 ms: long enough to press Cancel.
      let at = 0;
      const timer = setInterval(() => {
        if (res.destroyed || at >= bytes.length) return clearInterval(timer);
        res.write(bytes.subarray(at, at + 1024));
        at += 1024;
        if (at >= bytes.length) res.end();
      }, 40);
      return undefined;
    }
    const m = /^\/(.+)\/resolve\/([^/]+)\/([^/]+)$/.exec(req.url);
    const model = m && MODELS[decodeURIComponent(m[1])];
    if (!model) return res.writeHead(404, CORS).end('Repository not found');
    if (model.private && req.headers.authorization !== 'Bearer hf_secret') return res.writeHead(401, CORS).end('Unauthorized');
    const file = m[3];
    if (!(model.files ?? FILES).includes(file)) return res.writeHead(404, CORS).end('Entry not found');
    if (file.endsWith('.safetensors')) return res.writeHead(302, { ...CORS, location: `${model.otherCdn ? otherCdn : ''}/cdn/${m[1]}/${file}` }).end();
    const bytes = model.indexText && file === 'model.safetensors.index.json' ? Buffer.from(model.indexText)
      : model.configText && file === 'config.json' ? Buffer.from(model.configText) : readFileSync(path.join(model.folder ?? TINY_BERT, file));
    return res.writeHead(200, { ...CORS, 'content-length': bytes.length }).end(bytes);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
}
const stopHub = () => new Promise((resolve) => {
  for (const s of sockets) s.destroy();
  hub.close(resolve);
});

before(async () => {
  await new Promise((resolve) => cdnServer.listen(0, '127.0.0.1', resolve));
  otherCdn = `http://127.0.0.1:${cdnServer.address().port}`;
  hub = await startHub();
  endpoint = `http://127.0.0.1:${hub.address().port}`;
  lab = await startLab();
});
after(async () => {
  await lab?.close();
  if (hub.listening) await stopHub();
  cdnServer.closeAllConnections?.();
  cdnServer.close();
});

async function openLab() {
  const page = await lab.context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(e.message));
  await page.goto(`${lab.url}?lab=pretrained`);
  await page.waitForSelector('#hub-id');
  await page.click('.hub-settings summary');
  await page.fill('#hub-endpoint', endpoint);
  return { page, problems };
}

async function openById(page, id, token = '') {
  await page.fill('#hub-token', token);
  await page.fill('#hub-id', id);
  await page.click('#hub-open');
}

async function status(page, pattern) {
  try {
    await page.waitForFunction((p) => new RegExp(p).test(document.getElementById('open-status').textContent), pattern.source, { timeout: 30000 });
  } catch (error) {
    throw new Error(`the open status never matched ${pattern}: it says '${await page.textContent('#open-status')}' (${error.message.split('\n')[0]})`);
  }
}
const stored = (page) => page.textContent('#hub-stored');

test('the field starts with the lab\'s example id; a model opened by id draws its heads and is kept, with its size', async () => {
  const { page, problems } = await openLab();
  const fresh = await lab.context.newPage();
  await fresh.goto(`${lab.url}?lab=pretrained`);
  assert.equal(await fresh.inputValue('#hub-id'), 'bert-base-uncased');
  // Others that fit the lab, one click from the field (issue 25): a DistilBERT among them.
  assert.match(await fresh.textContent('#hub-suggestions'), /^Others that fit this lab: distilbert-base-uncased, bert-base-multilingual-cased, prajjwal1\/bert-tiny$/);
  await fresh.click('#hub-suggestions button[data-model="distilbert-base-uncased"]');
  assert.equal(await fresh.inputValue('#hub-id'), 'distilbert-base-uncased');
  await fresh.close();
  await page.waitForFunction(() => /No model is kept/.test(document.getElementById('hub-stored').textContent));
  await openById(page, 'test-org/bert-tiny');
  await status(page, /^Open: test-org\/bert-tiny: 2 layers × 2 heads, hidden size 32, vocabulary 179.* Kept in this browser for offline use\.$/);
  await waitConfigured(page);
  await waitDrawn(page);
  assert.equal(await page.$eval('canvas[data-figure="model-grid"]', (c) => JSON.parse(c.dataset.cells).length), 4, '2 layers x 2 heads');
  // Kept, with where it came from (not the default Hub here) and its size.
  await page.waitForFunction(() => /test-org\/bert-tiny from http:\/\/127\.0\.0\.1:\d+: 0\.11 MB/.test(document.getElementById('hub-stored').textContent));
  // The link carries the model and its Hub; opened in another tab, it opens at once from this browser's copy.
  const link = new URL(page.url());
  assert.equal(link.searchParams.get('model'), 'test-org/bert-tiny');
  assert.equal(link.searchParams.get('hub'), endpoint);
  const shared = await lab.context.newPage();
  await shared.goto(link.href);
  await status(shared, /^Open: test-org\/bert-tiny: 2 layers.* Opened from this browser's copy \(no network\)\.$/);
  assert.equal(await shared.inputValue('#hub-id'), 'test-org/bert-tiny');
  await shared.close();
  // A link to a model this browser does not keep only fills it in: nothing is fetched until Open.
  const notKept = await lab.context.newPage();
  await notKept.goto(`${lab.url}?lab=pretrained&model=test-org/private-bert&hub=${encodeURIComponent(endpoint)}`);
  await notKept.waitForFunction(() => /No model is kept|Kept in this browser/.test(document.getElementById('hub-stored').textContent));
  assert.equal(await notKept.inputValue('#hub-id'), 'test-org/private-bert');
  assert.equal(await notKept.textContent('#open-status'), 'No checkpoint is open yet.');
  await notKept.close();
  // Issue 37: a sharded model by id: the index, then each shard once; it opens as the single file does.
  let before = hubRequests.length;
  await openById(page, 'test-org/bert-sharded');
  await status(page, /^Open: test-org\/bert-sharded: 2 layers × 2 heads, hidden size 32, vocabulary 179.* Kept in this browser for offline use\.$/);
  for (const shard of SHARDED_FILES.slice(4)) {
    assert.equal(hubRequests.slice(before).filter((r) => r === `GET /cdn/test-org/bert-sharded/${shard}`).length, 1, `${shard} downloaded once`);
  }
  await page.waitForFunction(() => /test-org\/bert-sharded from http:\/\/127\.0\.0\.1:\d+: 0\.11 MB/.test(document.getElementById('hub-stored').textContent));
  // An index naming a shard by a path: refused in one line before any shard is asked for.
  before = hubRequests.length;
  await openById(page, 'test-org/bert-sharded-hostile');
  await status(page, /test-org\/bert-sharded-hostile: model\.safetensors\.index\.json: shard "\.\.\/secret\.safetensors" names a folder: a shard is a plain file name beside the index/);
  assert.ok(hubRequests.slice(before).every((r) => !/secret|of-0000/.test(r)), hubRequests.slice(before).join('\n'));
  // A model too large for the 4 GB heap: refused from its config.json with the memory it needs (the
  // module's checkConfig, core/models/model_memory.h), before any other file is asked for.
  before = hubRequests.length;
  await openById(page, 'test-org/too-large-bert');
  await status(page, /test-org\/too-large-bert: config\.json describes a model that needs \d+ MB: \d+ MB of weights as float32 and \d+ MB of work, more than the 3840 MB a browser tab's WebAssembly memory can hold \(4 GB, less 256 MB for the module itself\); nothing of its weights was downloaded/);
  assert.deepEqual(hubRequests.slice(before).map((r) => r.split('/').pop()), ['config.json'], 'config.json only');
  assert.deepEqual(problems, []);
  await page.close();
});

test('a private model needs the token; the token is sent, not kept', async () => {
  const { page } = await openLab();
  await openById(page, 'test-org/private-bert');
  await status(page, /^Not opened: test-org\/private-bert: the Hub refused config\.json \(HTTP 401\): a gated or private model needs a token with access \(the Token field\)/);
  await openById(page, 'test-org/private-bert', 'hf_secret');
  await status(page, /^Open: test-org\/private-bert: 2 layers/);
  const reloaded = await lab.context.newPage();
  await reloaded.goto(`${lab.url}?lab=pretrained`);
  await reloaded.waitForSelector('#hub-token', { state: 'attached' });
  assert.equal(await reloaded.inputValue('#hub-token'), '', 'the token is not kept across tabs');
  await reloaded.close();
  await page.close();
});

test('Cancel stops a download and keeps nothing of that model', async () => {
  const { page } = await openLab();
  await openById(page, 'test-org/slow-bert');
  // The size of the whole download is said before its bytes come (the HEADs, the weights' behind the redirect).
  const size = ['config.json', 'vocab.txt', 'model.safetensors', 'tokenizer_config.json'].reduce((n, f) => n + readFileSync(path.join(TINY_BERT, f)).length, 0);
  await status(page, new RegExp(`^Downloading model\\.safetensors: .* MB… \\(${megabytes(size)} in all, kept in this browser\\)$`));
  assert.equal(await page.isVisible('#hub-cancel'), true);
  await page.click('#hub-cancel');
  await status(page, /^Not opened: cancelled: test-org\/slow-bert was not opened and nothing of model\.safetensors was kept/);
  await page.waitForFunction(() => !/slow-bert/.test(document.getElementById('hub-stored').textContent));
  await page.close();
});

test('the weights come in Range requests; a download that breaks off keeps its whole parts, and opening again goes on from them', async () => {
  const { page } = await openLab();
  const size = readFileSync(path.join(TINY_BERT, 'model.safetensors')).length;
  const open = () => page.evaluate(([model, endpoint]) => window.attnlabWorker.send('openHub', { lab: 'pretrained', model, revision: 'main', endpoint,
    token: null, partBytes: 40000, request: 'openHub' }), ['test-org/flaky-bert', endpoint]);
  await open();
  await status(page, /^Not opened: test-org\/flaky-bert: the download of model\.safetensors broke off after .*; the parts that arrived whole are kept: open it again to go on from them/);
  assert.deepEqual(cdnRanges, ['bytes=0-39999', 'bytes=40000-79999']);
  await page.waitForFunction(() => /test-org\/flaky-bert from http:\/\/127\.0\.0\.1:\d+: 0\.\d+ MB downloaded so far \(Open goes on from there\)/.test(document.getElementById('hub-stored').textContent));
  cdnRanges.length = 0;
  await open();
  await status(page, /^Open: test-org\/flaky-bert: 2 layers × 2 heads/);
  assert.deepEqual(cdnRanges, ['bytes=40000-79999', `bytes=80000-${size - 1}`], 'only the parts that were missing');
  await waitDrawn(page);
  await page.waitForFunction(() => /test-org\/flaky-bert from http:\/\/127\.0\.0\.1:\d+: 0\.11 MB Remove/.test(document.getElementById('hub-stored').textContent));
  await page.close();
});

test('a file that changes size between the announcing HEAD and its download is refused by name, nothing kept', async () => {
  const { page } = await openLab();
  const size = readFileSync(path.join(TINY_BERT, 'model.safetensors')).length;
  await openById(page, 'test-org/changing-bert');
  await status(page, new RegExp(`^Not opened: test-org/changing-bert: model\\.safetensors changed size between two requests \\(${size} bytes, then ${size + 16}\\): the model was updated while it downloaded; nothing of it was kept: open it again`));
  await page.waitForFunction(() => !/changing-bert/.test(document.getElementById('hub-stored').textContent));
  await page.close();
});

test('a renamed repository opens by its old id and is kept under it; its token never reaches the CDN on another origin', async () => {
  const { page, problems } = await openLab();
  await openById(page, 'bert-base-uncased');
  await status(page, /^Open: bert-base-uncased: 2 layers × 2 heads, hidden size 32/);
  await waitDrawn(page);
  await page.waitForFunction(() => /bert-base-uncased from http:\/\/127\.0\.0\.1:\d+: 0\.11 MB/.test(document.getElementById('hub-stored').textContent));
  // A private model renamed, with a token: the Hub (same origin as its redirect) sees the token; the CDN does not.
  otherCdnRequests.length = 0;
  await openById(page, 'test-org/old-private');
  await status(page, /^Not opened: test-org\/old-private: the Hub refused config\.json \(HTTP 401\)/);
  await openById(page, 'test-org/old-private', 'hf_secret');
  await status(page, /^Open: test-org\/old-private: 2 layers/);
  assert.ok(otherCdnRequests.some((q) => q.method === 'GET'), 'the weights came from the other origin');
  assert.deepEqual(otherCdnRequests.map((q) => q.authorization), otherCdnRequests.map(() => null), 'no Authorization header crossed to the CDN');
  assert.deepEqual(problems, []);
  await page.close();
});

test('a part that stalls is asked for again, then the download stops; the list says "stalled" and its Open goes on from the parts kept', async () => {
  const { page } = await openLab();
  // The page's own Open, with parts of 40,000 bytes and a 1 s stall window (hub_store.js' settings, made small).
  await page.evaluate(() => {
    const send = window.attnlabWorker.send.bind(window.attnlabWorker);
    window.attnlabWorker.send = (type, message) => send(type, type === 'openHub' ? { ...message, partBytes: 40000, stallSeconds: 1 } : message);
  });
  stalling = true;
  stalledTries.length = 0;
  cdnRanges.length = 0;
  await openById(page, 'test-org/stalling-bert');
  await status(page, /^Not opened: test-org\/stalling-bert: the download of model\.safetensors stalled: less than 1024 bytes arrived in 1 s, 3 times; 0\.04 MB that arrived whole are kept: open it again to go on from there/);
  assert.deepEqual(stalledTries, ['bytes=40000-79999', 'bytes=40000-79999', 'bytes=40000-79999'], 'the stalled part, asked for three times');
  await page.waitForFunction(() => /test-org\/stalling-bert from http:\/\/127\.0\.0\.1:\d+: stalled: the Hub stopped sending; 0\.0\d MB downloaded so far \(Open goes on from there\)/
    .test(document.getElementById('hub-stored').textContent));
  // The answer is beside the list's Open: press it once the Hub sends again.
  stalling = false;
  cdnRanges.length = 0;
  await page.click('#hub-stored button[data-resume]');
  await status(page, /^Open: test-org\/stalling-bert: 2 layers × 2 heads/);
  const size = readFileSync(path.join(TINY_BERT, 'model.safetensors')).length;
  assert.deepEqual(cdnRanges, ['bytes=40000-79999', `bytes=80000-${size - 1}`], 'only the parts that were missing');
  await waitDrawn(page);
  await page.waitForFunction(() => /test-org\/stalling-bert from http:\/\/127\.0\.0\.1:\d+: 0\.11 MB Remove/.test(document.getElementById('hub-stored').textContent));
  await page.close();
});

test('with the Hub gone, a kept model opens from the browser; Remove forgets it, and then it cannot open', async () => {
  await stopHub();
  const { page } = await openLab();
  await openById(page, 'test-org/bert-tiny');
  await status(page, /^Open: test-org\/bert-tiny: 2 layers.* Opened from this browser's copy \(no network\)\.$/);
  await waitDrawn(page);
  await page.click('#hub-stored button[aria-label="Remove test-org/bert-tiny from this browser"]');
  await page.waitForFunction(() => !/bert-tiny/.test(document.getElementById('hub-stored').textContent));
  await openById(page, 'test-org/bert-tiny');
  await status(page, /^Not opened: cannot reach http:\/\/127\.0\.0\.1:\d+ for test-org\/bert-tiny .*a model opens offline only once it has been opened here with the network/);
  assert.match(await page.textContent('#open-status'), /The checkpoint that was open is still open\./);
  await page.close();
});

test('a malformed id or endpoint is refused on the page, naming it', async () => {
  const { page } = await openLab();
  await openById(page, '../etc/passwd');
  await status(page, /^Not opened: '\.\.\/etc\/passwd' is not a Hub model id: ORG\/NAME or NAME, optionally @REVISION \(e\.g\. bert-base-uncased\)\./);
  await page.fill('#hub-endpoint', 'ftp://example');
  await openById(page, 'test-org/bert-tiny');
  await status(page, /^Not opened: 'ftp:\/\/example' is not an http\(s\) address for the Hub endpoint\./);
  await page.close();
});
