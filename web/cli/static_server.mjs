// A static file server for public/ on 127.0.0.1 (no server logic: any static host works the same):
//   startServer({port, base, root}) -> {url, close}. scripts/serve.mjs serves the site with it; the CLI's
// figures (figure.mjs) and the browser tests serve the built page with it.
import http from 'node:http';
import { createHash } from 'node:crypto';
import { createReadStream, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants as zlibConstants, gzipSync } from 'node:zlib';

const MIME = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript',
  '.css': 'text/css', '.wasm': 'application/wasm', '.json': 'application/json', '.png': 'image/png',
  '.svg': 'image/svg+xml', '.bin': 'application/octet-stream', '.wgsl': 'text/plain',
  '.safetensors': 'application/octet-stream', '.ico': 'image/x-icon',
  '.webmanifest': 'application/manifest+json',
};
// Compressed as a static host compresses them (GitHub Pages sends gzip for text and WASM), so what the
// browser tests and a local first visit load is the size the hosted page sends, not four times more.
export const COMPRESSIBLE = new Set(['.html', '.js', '.mjs', '.css', '.wasm', '.json', '.svg', '.wgsl', '.webmanifest']);
const ENCODERS = {
  br: (bytes) => brotliCompressSync(bytes, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 9 } }),
  gzip: (bytes) => gzipSync(bytes, { level: 9 }),
};
// One compressed copy per file, encoding and version (its ETag), made on the first request for it. It is
// kept on disk too, named by a hash of the bytes, because every browser test file is its own process with
// its own server: brotli at quality 9 takes ~0.2 s a WASM build and ~1 s for a lab's files, once per run
// instead of once per test file.
// At most ~200 MB of them (about a hundred builds of the site); the oldest go first.
const compressedCopies = new Map();
export const DISK_CACHE = path.join(os.tmpdir(), 'attnlab-compressed');
const DISK_CACHE_BYTES = 200 * 1024 * 1024;
const prunedDirs = new Set();

// The encoding to send: brotli where the request accepts it, else gzip, else none (q=0 refuses one).
export function chooseEncoding(acceptEncoding = '') {
  const accepted = new Set();
  for (const part of String(acceptEncoding).split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    if (name && !(q && Number(q.slice(2)) === 0)) accepted.add(name);
  }
  return ['br', 'gzip'].find((name) => accepted.has(name)) ?? null;
}

// The copy the build wrote beside the file (scripts/precompress_site.mjs: file.br, file.gz, with the
// file's own time), as nginx's gzip_static serves it; null where there is none or it is stale.
const SIBLING = { br: '.br', gzip: '.gz' };
function precompressed(file, encoding, mtimeMs) {
  try {
    const sibling = file + SIBLING[encoding];
    return Math.abs(statSync(sibling).mtimeMs - mtimeMs) < 1 ? readFileSync(sibling) : null; // within the ms utimes keeps
  } catch {
    return null;
  }
}

function compressedCopy(file, encoding, etag, cacheDir, mtimeMs) {
  const key = `${file}\0${encoding}\0${etag}`;
  let bytes = compressedCopies.get(key);
  if (bytes) return bytes;
  bytes = precompressed(file, encoding, mtimeMs) ?? cachedOrCompressed(readFileSync(file), encoding, cacheDir);
  compressedCopies.set(key, bytes);
  return bytes;
}

function cachedOrCompressed(raw, encoding, cacheDir) {
  const cached = path.join(cacheDir, `${createHash('sha256').update(raw).digest('hex')}.${encoding}`);
  try {
    return readFileSync(cached);
  } catch {
    const bytes = ENCODERS[encoding](raw);
    keepOnDisk(cached, bytes);
    return bytes;
  }
}

// Written under a temporary name and renamed, so a server in another process never reads half a copy.
// A disk that cannot take it (read-only, full) only costs the next process the compression.
function keepOnDisk(file, bytes) {
  try {
    mkdirSync(path.dirname(file), { recursive: true });
    pruneOnce(path.dirname(file));
    const partial = `${file}.${process.pid}.partial`;
    writeFileSync(partial, bytes);
    renameSync(partial, file);
  } catch {
    // Served from memory all the same.
  }
}

function pruneOnce(dir) {
  if (prunedDirs.has(dir)) return;
  prunedDirs.add(dir);
  const copies = readdirSync(dir).map((name) => {
    const file = path.join(dir, name);
    const { size, mtimeMs } = statSync(file);
    return { file, size, mtimeMs };
  }).sort((a, b) => b.mtimeMs - a.mtimeMs);
  let kept = 0;
  for (const copy of copies) {
    kept += copy.size;
    if (kept > DISK_CACHE_BYTES) rmSync(copy.file, { force: true });
  }
}

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

// cacheDir: where compressed copies are kept between processes (a test gives its own).
export function startServer({ port = 0, base = '/', root = path.join(REPO, 'public'), cacheDir = DISK_CACHE } = {}) {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://localhost');
    let pathname;
    try {
      pathname = decodeURIComponent(url.pathname);
    } catch {
      res.writeHead(400).end('bad request: the path is not valid percent-encoding');
      return;
    }
    if (!pathname.startsWith(base)) {
      res.writeHead(404).end('not found');
      return;
    }
    pathname = pathname.slice(base.length);
    let file = path.join(root, pathname);
    if (file !== root && !file.startsWith(root + path.sep)) {
      res.writeHead(403).end('forbidden');
      return;
    }
    let stat;
    try {
      if (statSync(file).isDirectory()) file = path.join(file, 'index.html');
      stat = statSync(file);
    } catch {
      res.writeHead(404).end('not found');
      return;
    }
    // Revalidated on every load (no-cache), answered 304 while the file is unchanged: the browser keeps
    // its copy and the compiled code it made from it (V8 caches compiled scripts and WASM only for
    // responses in the HTTP cache), so a reload neither downloads nor recompiles the site.
    const version = `${stat.size.toString(16)}-${Math.floor(stat.mtimeMs).toString(16)}`;
    const compressible = COMPRESSIBLE.has(path.extname(file));
    const encoding = compressible ? chooseEncoding(req.headers['accept-encoding']) : null;
    // Each encoding is its own representation with its own ETag, as HTTP caches expect.
    const etag = `"${version}${encoding ? `-${encoding}` : ''}"`;
    const headers = { 'Content-Type': MIME[path.extname(file)] ?? 'application/octet-stream',
      'Cache-Control': 'no-cache', ETag: etag, 'Last-Modified': stat.mtime.toUTCString() };
    if (compressible) headers.Vary = 'Accept-Encoding';
    if (req.headers['if-none-match'] === etag) {
      res.writeHead(304, headers).end();
      return;
    }
    if (encoding) {
      const bytes = compressedCopy(file, encoding, etag, cacheDir, stat.mtimeMs);
      res.writeHead(200, { ...headers, 'Content-Encoding': encoding, 'Content-Length': bytes.length });
      res.end(req.method === 'HEAD' ? undefined : bytes);
      return;
    }
    res.writeHead(200, { ...headers, 'Content-Length': stat.size });
    if (req.method === 'HEAD') res.end();
    else createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => {
    server.listen(port, '127.0.0.1', () => {
      const url = `http://127.0.0.1:${server.address().port}${base}`;
      // close() ends every connection too: a browser's speculative connection that never sent a request
      // is not idle to Node, and server.close() alone waited for it until requestTimeout (300 s; a
      // browser test once took 294 s to end).
      resolve({ url, close: () => new Promise((r) => { server.close(r); server.closeAllConnections(); }) });
    });
  });
}

