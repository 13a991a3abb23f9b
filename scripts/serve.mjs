#!/usr/bin/env node
// A static file server for public/ on 127.0.0.1 (no server logic: any static host works the same).
//   node scripts/serve.mjs [--port 8080] [--base /attention-lab/] [--root public]
// Also importable: startServer({port, base, root}) -> {url, close}. Used by the browser tests.
import http from 'node:http';
import { createReadStream, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const MIME = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript',
  '.css': 'text/css', '.wasm': 'application/wasm', '.json': 'application/json', '.png': 'image/png',
  '.svg': 'image/svg+xml', '.bin': 'application/octet-stream', '.wgsl': 'text/plain',
  '.safetensors': 'application/octet-stream', '.ico': 'image/x-icon',
};
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export function startServer({ port = 0, base = '/', root = path.join(REPO, 'public') } = {}) {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://localhost');
    let pathname = decodeURIComponent(url.pathname);
    if (!pathname.startsWith(base)) {
      res.writeHead(404).end('not found');
      return;
    }
    pathname = pathname.slice(base.length);
    let file = path.join(root, pathname);
    if (!file.startsWith(root)) {
      res.writeHead(403).end('forbidden');
      return;
    }
    try {
      if (statSync(file).isDirectory()) file = path.join(file, 'index.html');
      statSync(file);
    } catch {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'Content-Type': MIME[path.extname(file)] ?? 'application/octet-stream' });
    createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => {
    server.listen(port, '127.0.0.1', () => {
      const url = `http://127.0.0.1:${server.address().port}${base}`;
      resolve({ url, close: () => new Promise((r) => server.close(r)) });
    });
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const arg = (name, fallback) => {
    const i = process.argv.indexOf(name);
    return i > 0 ? process.argv[i + 1] : fallback;
  };
  let base = arg('--base', '/');
  if (!base.endsWith('/')) base += '/';
  const { url } = await startServer({ port: Number(arg('--port', 8080)), base, root: path.resolve(arg('--root', path.join(REPO, 'public'))) });
  console.log(`Attention Lab is served at ${url}  (Ctrl+C to stop)`);
}
