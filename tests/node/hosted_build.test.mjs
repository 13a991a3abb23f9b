// The hosted build as scripts/build.sh leaves it (issue 47): the page's and the worker's modules bundled
// (scripts/bundle_site.mjs), the service worker's list holding the bundles and not the modules inside
// them, and a brotli and a gzip copy beside every text and WASM file of that list
// (scripts/precompress_site.mjs). The browser tests load this build; these check its shape.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';

const PUBLIC = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..', 'public');
const read = (file) => readFileSync(path.join(PUBLIC, file));
const manifestText = read('build/site_manifest.js').toString();
const { files } = JSON.parse(manifestText.slice(manifestText.indexOf('{'), manifestText.lastIndexOf('}') + 1));
const bundle = JSON.parse(read('build/web/bundle.json').toString());

test('the page and its worker are bundles: a handful of files where ~170 modules were', () => {
  const code = bundle.outputs.filter((f) => f.endsWith('.js'));
  assert.ok(bundle.inputs.length > 150, `${bundle.inputs.length} modules bundled`);
  assert.ok(code.length <= 10, `${code.length} files: ${code.join(', ')}`);
  for (const entry of ['build/web/app.js', 'build/web/worker_start.js']) assert.ok(code.includes(entry), entry);
  // A bundle imports only its own chunks: no module of web/ by its path.
  const app = read('build/web/app.js').toString();
  assert.doesNotMatch(app, /from\s*["']\.\/(ui|labs|shared|site)\//);
  assert.match(app, /from\s*["']\.\/chunk-[A-Z0-9]+\.js["']/);
});

test('the service worker caches the bundles and the WASM, not the modules inside the bundles, nor the compressed copies', () => {
  for (const file of [...bundle.outputs.filter((f) => f.endsWith('.js')), 'build/attnlab-simd.wasm', 'build/attnlab-simd-threads.wasm', 'index.html']) {
    assert.ok(files.includes(file), `${file} is cached for offline use`);
  }
  for (const file of ['build/web/ui/lab_page.js', 'build/web/labs/registry.js', 'build/node_modules/@huggingface/jinja/dist/index.js']) {
    assert.ok(!files.includes(file), `${file} is inside a bundle`);
  }
  assert.deepEqual(files.filter((f) => /\.(js|wasm|html|css)\.(br|gz)$/.test(f) || f.endsWith('.map')), []);
  assert.ok(files.includes('assets/mnist10k.bin.gz'), 'a data file that is gzip itself is a file of the site');
  for (const file of files) assert.ok(existsSync(path.join(PUBLIC, file)), `${file} exists`);
});

test('every text and WASM file the page loads has its brotli and gzip copy beside it, the same bytes decoded', () => {
  const compressible = files.filter((f) => /\.(html|js|mjs|css|wasm|json|svg|wgsl|webmanifest)$/.test(f));
  assert.ok(compressible.length > 10);
  for (const file of compressible) {
    const raw = read(file);
    assert.deepEqual(brotliDecompressSync(read(`${file}.br`)), raw, `${file}.br`);
    assert.deepEqual(gunzipSync(read(`${file}.gz`)), raw, `${file}.gz`);
  }
  const wasm = read('build/attnlab-simd.wasm').length;
  assert.ok(read('build/attnlab-simd.wasm.br').length < wasm / 3, 'the WASM sends in under a third of its bytes');
});
