#!/usr/bin/env node
// Serves public/ on 127.0.0.1 (no server logic: any static host works the same).
//   node scripts/serve.mjs [--port 8080] [--base /attention-lab/] [--root public]
// The server itself is web/cli/static_server.mjs (startServer, re-exported here for the browser tests).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '../web/cli/static_server.mjs';

export { startServer };

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

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
