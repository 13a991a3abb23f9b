// A static file server for public/ on 127.0.0.1 (no server logic: any static host works the same):
//   startServer({port, base, root}) -> {url, close}. scripts/serve.mjs serves the site with it; the CLI's
// figures (figure.mjs) and the browser tests serve the built page with it.
import http from 'node:http';
import { createReadStream, readFileSync, statSync } from 'node:fs';
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
const COMPRESSIBLE = new Set(['.html', '.js', '.mjs', '.css', '.wasm', '.json', '.svg', '.wgsl', '.webmanifest']);
const ENCODERS = {
  br: (bytes) => brotliCompressSync(bytes, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 9 } }),
  gzip: (bytes) => gzipSync(bytes, { level: 9 }),
};
// One compressed copy per file, encoding and version (its ETag), made on the first request for it.
const compressedCopies = new Map();

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

function compressedCopy(file, encoding, etag) {
  const key = `${file}\0${encoding}\0${etag}`;
  let bytes = compressedCopies.get(key);
  if (!bytes) {
    bytes = ENCODERS[encoding](readFileSync(file));
    compressedCopies.set(key, bytes);
  }
  return bytes;
}

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export function startServer({ port = 0, base = '/', root = path.join(REPO, 'public') } = {}) {
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
      const bytes = compressedCopy(file, encoding, etag);
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

