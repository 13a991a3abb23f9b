// The site's server (web/cli/static_server.mjs: scripts/serve.mjs, the browser tests, the CLI's figures)
// sends text and WASM compressed as a static host does (issue 47): brotli where accepted, else gzip, else
// the file as it is; each encoding has its own ETag and answers 304 to it; images are sent as they are.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { chooseEncoding, startServer } from '../../web/cli/static_server.mjs';

const root = mkdtempSync(path.join(os.tmpdir(), 'attnlab-serve-'));
const script = 'export const rows = [' + Array.from({ length: 2000 }, (_, i) => i % 7).join(', ') + '];\n';
writeFileSync(path.join(root, 'app.js'), script);
const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3, 4]);
writeFileSync(path.join(root, 'icon.png'), png);
const cacheDir = path.join(root, '..', `${path.basename(root)}-compressed`);
const server = await startServer({ port: 0, root, cacheDir });
after(() => server.close());

// Node's http.get, not fetch: fetch decodes the body and hides what came over the wire.
function get(file, headers = {}, from = server) {
  return new Promise((resolve, reject) => {
    http.get(new URL(file, from.url), { headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
}

test('brotli where the browser accepts it, the same bytes once decoded, and far fewer of them', async () => {
  const res = await get('app.js', { 'Accept-Encoding': 'gzip, deflate, br' });
  assert.equal(res.status, 200);
  assert.equal(res.headers['content-encoding'], 'br');
  assert.equal(res.headers.vary, 'Accept-Encoding');
  assert.equal(Number(res.headers['content-length']), res.body.length);
  assert.equal(brotliDecompressSync(res.body).toString(), script);
  assert.ok(res.body.length < script.length / 4, `${res.body.length} bytes of ${script.length}`);
});

test('gzip where brotli is not accepted, and the file as it is where nothing is', async () => {
  const gz = await get('app.js', { 'Accept-Encoding': 'gzip' });
  assert.equal(gz.headers['content-encoding'], 'gzip');
  assert.equal(gunzipSync(gz.body).toString(), script);
  const plain = await get('app.js');
  assert.equal(plain.headers['content-encoding'], undefined);
  assert.equal(plain.body.toString(), script);
  assert.equal(Number(plain.headers['content-length']), script.length);
});

test('each encoding is its own representation: its own ETag, 304 to it, 200 to another', async () => {
  const br = await get('app.js', { 'Accept-Encoding': 'br' });
  const gz = await get('app.js', { 'Accept-Encoding': 'gzip' });
  assert.notEqual(br.headers.etag, gz.headers.etag);
  const again = await get('app.js', { 'Accept-Encoding': 'br', 'If-None-Match': br.headers.etag });
  assert.equal(again.status, 304);
  assert.equal(again.body.length, 0);
  const other = await get('app.js', { 'Accept-Encoding': 'gzip', 'If-None-Match': br.headers.etag });
  assert.equal(other.status, 200);
  assert.equal(gunzipSync(other.body).toString(), script);
});

test('an image is sent as it is, whatever the request accepts', async () => {
  const res = await get('icon.png', { 'Accept-Encoding': 'br, gzip' });
  assert.equal(res.headers['content-encoding'], undefined);
  assert.deepEqual(res.body, png);
});

test('the encoding chosen from Accept-Encoding, q=0 refusing one', () => {
  assert.equal(chooseEncoding('gzip, deflate, br, zstd'), 'br');
  assert.equal(chooseEncoding('br;q=0, gzip;q=0.8'), 'gzip');
  assert.equal(chooseEncoding('identity'), null);
  assert.equal(chooseEncoding(''), null);
  assert.equal(chooseEncoding(undefined), null);
});

test('a compressed copy is kept on disk by the hash of its bytes, and another server (another test process) sends it', async () => {
  const sub = path.join(root, 'sub');
  mkdirSync(sub);
  const text = 'export const kept = "' + 'x'.repeat(5000) + '";\n';
  writeFileSync(path.join(sub, 'kept.js'), text);
  const hash = createHash('sha256').update(text).digest('hex');
  await get('sub/kept.js', { 'Accept-Encoding': 'gzip' });
  assert.ok(existsSync(path.join(cacheDir, `${hash}.gzip`)), 'the gzip copy is on disk');
  // A copy planted under the hash is what a fresh server sends: it reads the disk, not compresses again.
  const planted = Buffer.from('planted copy');
  writeFileSync(path.join(cacheDir, `${hash}.br`), planted);
  const other = await startServer({ port: 0, root, cacheDir });
  try {
    const res = await get('sub/kept.js', { 'Accept-Encoding': 'br' }, other);
    assert.deepEqual(res.body, planted);
  } finally {
    await other.close();
  }
});
