// The site's server (web/cli/static_server.mjs: scripts/serve.mjs, the browser tests, the CLI's figures)
// sends text and WASM compressed as a static host does (issue 47): brotli where accepted, else gzip, else
// the file as it is; each encoding has its own ETag and answers 304 to it; images are sent as they are.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { chooseEncoding, startServer } from '../../web/cli/static_server.mjs';

const REPO = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');

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

test('a copy the build wrote beside the file (file.br, file.gz, the file\'s time) is what is sent; a stale one is not', async () => {
  const text = 'export const shipped = "' + 'y'.repeat(3000) + '";\n';
  const file = path.join(root, 'shipped.js');
  writeFileSync(file, text);
  const built = Buffer.from('the build\'s brotli copy');
  writeFileSync(`${file}.br`, built);
  const { mtime } = statSync(file);
  utimesSync(`${file}.br`, mtime, mtime);
  assert.deepEqual((await get('shipped.js', { 'Accept-Encoding': 'br' })).body, built);
  // The file changed after the copy was made (its time no longer matches): compressed afresh.
  writeFileSync(`${file}.gz`, 'stale');
  utimesSync(`${file}.gz`, new Date(mtime.getTime() - 60000), new Date(mtime.getTime() - 60000));
  assert.equal(gunzipSync((await get('shipped.js', { 'Accept-Encoding': 'gzip' })).body).toString(), text);
});

test('scripts/precompress_site.mjs writes both copies of every text and WASM file the page loads, with the file\'s time', () => {
  const site = mkdtempSync(path.join(os.tmpdir(), 'attnlab-precompress-'));
  mkdirSync(path.join(site, 'build'));
  writeFileSync(path.join(site, 'index.html'), '<!doctype html>' + '<p>lab</p>'.repeat(300));
  writeFileSync(path.join(site, 'icon.png'), png);
  writeFileSync(path.join(site, 'build', 'site_manifest.js'),
    `self.ATTNLAB_SITE = ${JSON.stringify({ id: 'x', files: ['index.html', 'icon.png'] })};\n`);
  const out = execFileSync(process.execPath, [path.join(REPO, 'scripts', 'precompress_site.mjs'), '--root', site], { encoding: 'utf8' });
  assert.match(out, /\[precompress\] 1 files, .* 2 copies written/);
  const html = readFileSync(path.join(site, 'index.html'));
  assert.deepEqual(brotliDecompressSync(readFileSync(path.join(site, 'index.html.br'))), html);
  assert.deepEqual(gunzipSync(readFileSync(path.join(site, 'index.html.gz'))), html);
  const apart = Math.abs(statSync(path.join(site, 'index.html.br')).mtimeMs - statSync(path.join(site, 'index.html')).mtimeMs);
  assert.ok(apart < 1, `the copy's time is its file's, to the ms utimes keeps (${apart} ms apart)`);
  assert.equal(existsSync(path.join(site, 'icon.png.br')), false, 'an image is not compressed');
  // A second run keeps what is current.
  assert.match(execFileSync(process.execPath, [path.join(REPO, 'scripts', 'precompress_site.mjs'), '--root', site], { encoding: 'utf8' }), /0 copies written/);
});
