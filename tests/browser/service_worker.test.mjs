// The service worker (public/sw.js) against public/ served with no special headers, as any static host
// serves it: the first load starts at once without threads (and says why), registers the worker once its
// figure is drawn, and never reloads itself; the second load is cross-origin isolated,
// running the SIMD128 + threads module to the same loss bits as the single-threaded one; with the
// network off a reload opens every training lab and trains; a new build's cache replaces the old one
// when the page is told to; where isolation cannot be had, the badge says why.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startLab, openPage, recordLosses, trainToEnd, waitConfigured } from './support.mjs';
import { startServer } from '../../scripts/serve.mjs';

const PUBLIC = path.join(path.dirname(new URL(import.meta.url).pathname), '..', '..', 'public');
// Small runs: what is checked is which module ran and its bits, not what the model learns.
const RUN = '?lab=alignment&task=copy&seed=3&batch=16&steps=12&speed=max';

const badgeOf = (page) => page.evaluate(() => {
  const b = document.getElementById('badge-version');
  return { text: b.textContent, build: b.dataset.build, threads: b.dataset.threads, noThreads: b.dataset.noThreads };
});

let lab;
before(async () => { lab = await startLab({ serviceWorker: true }); });
after(async () => { await lab?.close(); });

test('first visit starts at once without threads and says why, no reload; the next load is crossOriginIsolated, "SIMD128 + 2 threads", and the same loss bits as the SIMD128 module', async () => {
  const first = await lab.context.newPage();
  const loads = [];
  first.on('load', () => loads.push(first.url()));
  await first.goto(lab.url + RUN);
  await waitConfigured(first);
  assert.equal(await first.evaluate(() => crossOriginIsolated), false);
  const { build, threads, noThreads } = await badgeOf(first);
  assert.deepEqual({ build, threads, noThreads }, { build: 'simd', threads: '1',
    noThreads: 'a first visit starts at once, while the service worker caches the site for offline use; the next load runs threads' });
  // Registered once the figure is drawn; the install caches the site. The page is never reloaded for it.
  await first.evaluate(() => navigator.serviceWorker.ready);
  assert.equal(loads.length, 1, `no automatic reload: ${loads.join(', ')}`);
  assert.equal(await first.evaluate(() => performance.getEntriesByType('navigation')[0].type), 'navigate');
  await first.close();

  const page = await lab.context.newPage();
  await recordLosses(page);
  await page.goto(lab.url + RUN);
  await waitConfigured(page);
  assert.equal(await page.evaluate(() => crossOriginIsolated), true, 'the second load, served by the worker, is isolated');
  assert.equal(await page.evaluate(() => performance.getEntriesByType('navigation')[0].type), 'navigate');
  // This machine's core count decides the pool (navigator.hardwareConcurrency, capped at 2: web/worker.js).
  const cores = await page.evaluate(() => navigator.hardwareConcurrency);
  const expected = Math.min(cores, 2);
  assert.deepEqual(await badgeOf(page), { text: `v${await page.getAttribute('#badge-version', 'data-version')} · SIMD128 + ${expected} thread${expected === 1 ? '' : 's'}`,
    build: 'simd-threads', threads: String(expected), noThreads: '' });
  await trainToEnd(page);
  const threaded = await page.evaluate(() => window.__losses);
  assert.equal(threaded.length, 12);

  // A load after that is served by the worker without any reload.
  await page.goto(lab.url + RUN);
  await waitConfigured(page);
  assert.equal(await page.evaluate(() => performance.getEntriesByType('navigation')[0].type), 'navigate');
  assert.equal(await page.evaluate(() => crossOriginIsolated), true);
  await page.close();

  // The same run where the page has no service worker: the single-threaded SIMD128 module.
  const plain = await startLab();
  try {
    const single = await plain.context.newPage();
    await recordLosses(single);
    await single.goto(plain.url + RUN);
    await waitConfigured(single);
    assert.equal(await single.evaluate(() => crossOriginIsolated), false);
    assert.equal((await badgeOf(single)).build, 'simd');
    await trainToEnd(single);
    assert.deepEqual(await single.evaluate(() => window.__losses), threaded, 'threads change no bit of the losses');
  } finally {
    await plain.close();
  }
});

test('offline: a reload opens every training lab from the cache, and each trains', async () => {
  const { page, problems } = await openPage(lab, RUN); // the worker is installed by the test before
  await lab.context.setOffline(true);
  try {
    for (const query of ['?lab=alignment&task=copy&steps=5&speed=max', '?lab=lookup&steps=5&speed=max', '?lab=count&steps=5&speed=max']) {
      await page.goto(lab.url + query);
      await waitConfigured(page);
      await trainToEnd(page);
      assert.equal(await page.getAttribute('#progress-text', 'data-step'), '5', query);
      assert.equal(await page.evaluate(() => crossOriginIsolated), true, `${query}: still isolated offline`);
    }
    await page.reload();
    await waitConfigured(page);
    assert.deepEqual(problems, []);
  } finally {
    await lab.context.setOffline(false);
    await page.close();
  }
});

test('a hard reload (Ctrl+Shift+R bypasses the worker) starts at once without threads and says how to get them back', async () => {
  const page = await lab.context.newPage();
  await page.goto(lab.url + RUN);
  await waitConfigured(page);
  assert.equal(await page.evaluate(() => crossOriginIsolated), true, 'the worker controls the page');
  // What Ctrl+Shift+R sends: a reload that ignores the cache, which the browser serves past the worker.
  const cdp = await page.context().newCDPSession(page);
  await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), cdp.send('Page.reload', { ignoreCache: true })]);
  await waitConfigured(page);
  assert.equal(await page.evaluate(() => !!navigator.serviceWorker.controller), false, 'the reload was not served by the worker');
  const badge = await badgeOf(page);
  assert.equal(badge.build, 'simd');
  // The reason, not "still caching the site" after waiting 20 s for a worker that will never take the page.
  assert.equal(badge.noThreads, 'a hard reload bypasses the site\'s worker: reload normally for threads');
  // A normal reload brings the threads back.
  await page.reload();
  await waitConfigured(page);
  assert.equal(await page.evaluate(() => crossOriginIsolated), true);
  assert.equal((await badgeOf(page)).build, 'simd-threads');
  await page.close();
});

test('a sandboxed frame (allow-scripts allow-same-origin) in a page that is not isolated runs single-threaded and says why', async (t) => {
  // The embedding page is on another origin (another port: no service worker there), as a course site
  // embeds the lab, served with no special headers.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'attnlab-parent-'));
  writeFileSync(path.join(dir, 'index.html'), `<!doctype html><iframe title="lab" sandbox="allow-scripts allow-same-origin" src="${lab.url}${RUN}&embed=1" style="width:640px;height:480px"></iframe>`);
  const parent = await startServer({ port: 0, root: dir });
  t.after(async () => { await parent.close(); rmSync(dir, { recursive: true, force: true }); });
  const page = await lab.context.newPage();
  await page.goto(parent.url);
  assert.equal(await page.evaluate(() => crossOriginIsolated), false);
  const frame = await (await page.waitForSelector('iframe')).contentFrame();
  await frame.waitForFunction(() => document.getElementById('badge-version')?.dataset.build, null, { timeout: 30000 });
  assert.equal(await frame.evaluate(() => crossOriginIsolated), false);
  const badge = await badgeOf(frame);
  assert.equal(badge.build, 'simd');
  assert.match(badge.noThreads, /embedded in a frame, and the embedding page is not cross-origin isolated/);
  assert.match(await frame.getAttribute('#badge-version', 'title'), /no threads: the page is embedded in a frame/);
  await page.close();
});

test('a new build is cached beside the old one, offered as "Reload for the new version", and replaces it', async () => {
  // A copy of the site whose manifest the test rewrites: every entry a link to public/, but for it.
  const root = mkdtempSync(path.join(os.tmpdir(), 'attnlab-site-'));
  for (const entry of readdirSync(PUBLIC)) if (entry !== 'build') symlinkSync(path.join(PUBLIC, entry), path.join(root, entry));
  mkdirSync(path.join(root, 'build'));
  for (const entry of readdirSync(path.join(PUBLIC, 'build'))) {
    if (entry !== 'site_manifest.js') symlinkSync(path.join(PUBLIC, 'build', entry), path.join(root, 'build', entry));
  }
  const { default: vm } = await import('node:vm');
  const context = { self: {} };
  vm.runInNewContext((await import('node:fs')).readFileSync(path.join(PUBLIC, 'build', 'site_manifest.js'), 'utf8'), context);
  const files = context.self.ATTNLAB_SITE.files;
  const writeBuild = (id) => writeFileSync(path.join(root, 'build', 'site_manifest.js'), `self.ATTNLAB_SITE = ${JSON.stringify({ id, files })};\n`);
  writeBuild('old-build');
  const site = await startLab({ serviceWorker: true, root });
  try {
    const { page } = await openPage(site, RUN);
    assert.deepEqual(await page.evaluate(() => caches.keys()), ['attnlab-site-old-build']);
    writeBuild('new-build');
    await page.evaluate(async () => (await navigator.serviceWorker.getRegistration()).update());
    await page.waitForSelector('#reload-new-version');
    // Until the page says so, the old build serves the page and both caches exist.
    assert.deepEqual((await page.evaluate(() => caches.keys())).sort(), ['attnlab-site-new-build', 'attnlab-site-old-build']);
    await Promise.all([page.waitForNavigation(), page.click('#reload-new-version')]);
    await waitConfigured(page);
    assert.deepEqual(await page.evaluate(() => caches.keys()), ['attnlab-site-new-build']);
    assert.equal(await page.evaluate(() => crossOriginIsolated), true);
    assert.equal(await page.$('#reload-new-version'), null, 'no offer once the new build runs');
  } finally {
    await site.close();
    rmSync(root, { recursive: true, force: true });
  }
});
