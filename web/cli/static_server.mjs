// A static file server for public/ on 127.0.0.1 (no server logic: any static host works the same):
//   startServer({port, base, root}) -> {url, close}. scripts/serve.mjs serves the site with it; the CLI's
// figures (figure.mjs) and the browser tests serve the built page with it.
import http from 'node:http';
import { createReadStream, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const MIME = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript',
  '.css': 'text/css', '.wasm': 'application/wasm', '.json': 'application/json', '.png': 'image/png',
  '.svg': 'image/svg+xml', '.bin': 'application/octet-stream', '.wgsl': 'text/plain',
  '.safetensors': 'application/octet-stream', '.ico': 'image/x-icon',
  '.webmanifest': 'application/manifest+json',
};
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
    const etag = `"${stat.size.toString(16)}-${Math.floor(stat.mtimeMs).toString(16)}"`;
    const headers = { 'Content-Type': MIME[path.extname(file)] ?? 'application/octet-stream',
      'Cache-Control': 'no-cache', ETag: etag, 'Last-Modified': stat.mtime.toUTCString() };
    if (req.headers['if-none-match'] === etag) {
      res.writeHead(304, headers).end();
      return;
    }
    res.writeHead(200, headers);
    createReadStream(file).pipe(res);
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

