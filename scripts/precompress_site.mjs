#!/usr/bin/env node
// Writes a brotli (.br, quality 11) and a gzip (.gz, level 9) copy beside every text and WASM file the
// page loads (the service worker's list, public/build/site_manifest.js), as nginx's gzip_static and
// brotli_static and Caddy's `precompressed` serve them: the host sends the copy the browser accepts
// without compressing anything per request, and at the strongest settings, which are too slow to run per
// request. web/cli/static_server.mjs (scripts/serve.mjs, the tests) serves them the same way.
// Incremental: a copy that carries its file's time (set here) is current, and kept.
//   node scripts/precompress_site.mjs [--root public]
import { readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { COMPRESSIBLE } from '../web/cli/static_server.mjs';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const i = process.argv.indexOf('--root');
const ROOT = path.resolve(i > 0 ? process.argv[i + 1] : path.join(REPO, 'public'));

const ENCODINGS = {
  '.br': (bytes) => brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11,
    [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length } }),
  '.gz': (bytes) => gzipSync(bytes, { level: 9 }),
};

// The manifest is a script that sets self.ATTNLAB_SITE: read its JSON, not run it.
const manifest = readFileSync(path.join(ROOT, 'build', 'site_manifest.js'), 'utf8');
const { files } = JSON.parse(manifest.slice(manifest.indexOf('{'), manifest.lastIndexOf('}') + 1));
const pages = files.filter((f) => COMPRESSIBLE.has(path.extname(f)));

let written = 0;
let raw = 0;
let brotli = 0;
for (const file of pages) {
  const full = path.join(ROOT, file);
  const stat = statSync(full);
  raw += stat.size;
  for (const [suffix, encode] of Object.entries(ENCODINGS)) {
    const copy = full + suffix;
    let fresh = false;
    try {
      fresh = Math.abs(statSync(copy).mtimeMs - stat.mtimeMs) < 1; // within the ms utimes keeps
    } catch {
      // not written yet
    }
    if (!fresh) {
      writeFileSync(copy, encode(readFileSync(full)));
      utimesSync(copy, stat.atime, stat.mtime); // the copy's time is its file's: how the server knows it is current
      written += 1;
    }
    if (suffix === '.br') brotli += statSync(copy).size;
  }
}
console.log(`[precompress] ${pages.length} files, ${(raw / 1e6).toFixed(2)} MB -> ${(brotli / 1e6).toFixed(2)} MB as brotli; ${written} copies written`);
