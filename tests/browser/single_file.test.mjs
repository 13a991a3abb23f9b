// The single file (scripts/build_single_file.mjs -> dist/attention-lab.html): built here from public/,
// at most 5 MB (every lab's assets included), and from file:// with every network request blocked it trains copy to the target.
// The served site, too, asks nothing of the network beyond its own server.
// Firefox is not driven: Debian's firefox-esr needs Playwright's patched Firefox (docs/offline.md).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { metric, openFile, openPage, startLab, startOffline, trainToEnd } from './support.mjs';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const FILE = path.join(REPO, 'dist', 'attention-lab.html');
const MAX_BYTES = 5_000_000;

let buildOutput;
let offline;
before(async () => {
  // Always rebuilt (a fraction of a second), so the file matches public/ as it is now.
  buildOutput = execFileSync(process.execPath, [path.join(REPO, 'scripts', 'build_single_file.mjs')], { cwd: REPO, encoding: 'utf8' });
  offline = await startOffline();
});
after(async () => { await offline?.close(); });

test('single file: the build prints its size, and it is <= 5 MB', (t) => {
  const bytes = statSync(FILE).size;
  t.diagnostic(buildOutput.trim());
  assert.match(buildOutput, new RegExp(`\\(${bytes} bytes; target <= 5 MB\\)`));
  assert.ok(bytes <= MAX_BYTES, `dist/attention-lab.html is ${bytes} bytes > ${MAX_BYTES}`);
});

test('single file from file://, network blocked: copy[seed=0,steps=200] trains to >= 99%, no errors, no http(s) request', async (t) => {
  const started = Date.now();
  const { page, problems } = await openFile(offline, `${pathToFileURL(FILE).href}?lab=alignment&task=copy&seed=0&steps=200&speed=max`);
  t.diagnostic(`configured ${((Date.now() - started) / 1000).toFixed(1)} s after opening; badge: ${(await page.textContent('#badge')).replace(/\s+/g, ' ').trim()}`);
  assert.match(await page.textContent('#badge-version'), /SIMD128 build/);
  // No service worker on file://, so no cross-origin isolation and no threads: the badge says why.
  assert.match(await page.getAttribute('#badge-version', 'data-no-threads'), /^the single file runs from file:\/\//);
  const trainStart = Date.now();
  await trainToEnd(page);
  t.diagnostic(`trained 200 steps in ${((Date.now() - trainStart) / 1000).toFixed(1)} s`);
  const accuracy = await metric(page, 'accuracy');
  assert.ok(accuracy >= 0.99, `accuracy ${accuracy} < 0.99`);
  assert.match(await page.textContent('#evaluation'), /100\.0%|99\.\d%/);
  assert.deepEqual(problems, []);
  assert.deepEqual(offline.blocked, [], 'requests that would have needed the network');
  assert.deepEqual(offline.requested.filter((u) => /^https?:/.test(u)), []);
  await page.close();
});

test('single file: both builds are inlined (the scalar glue and WASM instantiate too, with the page\'s hook)', async () => {
  const page = await offline.context.newPage();
  await page.goto(pathToFileURL(FILE).href);
  const result = await page.evaluate(async () => {
    const out = {};
    for (const build of ['simd', 'scalar']) {
      const { default: create } = await import(globalThis.ATTNLAB_INLINE.modules[build]);
      const mod = await create({ wasmBinary: await globalThis.ATTNLAB_INLINE.wasm[build], locateFile: (f) => f });
      out[build] = typeof mod._RawTrainer;
    }
    return out;
  });
  assert.deepEqual(result, { simd: 'function', scalar: 'function' });
  await page.close();
});

test('served site: no request leaves its own server (127.0.0.1) while it loads and trains', async () => {
  const lab = await startLab();
  const outside = [];
  await lab.context.route('**', (route) => {
    const url = route.request().url();
    if (url.startsWith(lab.url) || /^(blob|data):/.test(url)) return route.continue();
    outside.push(url);
    return route.abort();
  });
  try {
    const { page, problems } = await openPage(lab, '?lab=alignment&task=copy&seed=0&steps=50&speed=max');
    await trainToEnd(page);
    assert.deepEqual(outside, []);
    assert.deepEqual(problems, []);
  } finally {
    await lab.close();
  }
});
