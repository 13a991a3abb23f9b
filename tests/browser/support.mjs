// Shared by the browser tests: serve public/ on a free port, drive Debian's Chromium with
// playwright-core (never a downloaded browser), collect every console error and failed request,
// and read attention values back from the heatmap canvas's pixels.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { startServer } from '../../scripts/serve.mjs';
import { PALETTES } from '../../web/shared/palette.js';

export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const ARGS = ['--no-sandbox', '--disable-gpu-sandbox', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--disable-renderer-backgrounding', '--disable-background-timer-throttling'];

/**
 * A server and a browser with a fresh profile; close() ends both. webgpu: pass --enable-unsafe-webgpu.
 * serviceWorker: false (the default) shows the pages a browser without service workers, so a test's
 * first load is the page itself, with no reload to become cross-origin isolated and no threads
 * module, as before the service worker; tests/browser/service_worker.test.mjs passes true. (Playwright's
 * own serviceWorkers: 'block' is not used: there register() never settles.) root: serve another copy
 * of the site.
 */
export async function startLab({ webgpu = false, serviceWorker = false, root } = {}) {
  const server = await startServer({ port: 0, ...(root ? { root } : {}) });
  const profile = mkdtempSync(path.join(os.tmpdir(), 'attnlab-profile-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [...ARGS, ...(webgpu ? ['--enable-unsafe-webgpu'] : [])],
    env: { ...process.env, VK_ICD_FILENAMES: process.env.VK_ICD_FILENAMES ?? '/usr/lib/chromium/vk_swiftshader_icd.json' },
    viewport: { width: 1400, height: 1000 },
  });
  if (!serviceWorker) await context.addInitScript(() => Object.defineProperty(Navigator.prototype, 'serviceWorker', { get: () => undefined }));
  return {
    url: server.url,
    context,
    async close() {
      await context.close();
      await server.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Opens the page at `query` and records everything that went wrong: console errors, uncaught
 * exceptions, failed requests, responses >= 400. viewport: {width, height} for this page (1400x1000
 * otherwise); files: the checkpoint's files to choose when the lab asks (the lab's tiny one otherwise). -> {page, problems}
 */
export async function openPage(lab, query = '?lab=alignment', { viewport, files } = {}) {
  const page = await lab.context.newPage();
  if (viewport) await page.setViewportSize(viewport);
  const problems = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} (${r.failure()?.errorText})`));
  page.on('response', (r) => { if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`); });
  await page.goto(lab.url + query);
  await openCheckpointIfAsked(page, files);
  await waitConfigured(page);
  return { page, problems };
}

// A lab that opens the user's files (the Pretrained lab) shows nothing until it has them: the tests
// choose the tiny checkpoint of tests/fixtures/make_bert_fixtures.py, as a user picks a folder's files.
export const TINY_BERT = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'fixtures', 'bert_tiny', 'modern');
export const TINY_BERT_FILES = ['config.json', 'vocab.txt', 'model.safetensors', 'tokenizer_config.json'].map((f) => path.join(TINY_BERT, f));

export const TINY_MARIAN = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'fixtures', 'marian_tiny');
export const TINY_MARIAN_FILES = ['config.json', 'source.spm', 'target.spm', 'vocab.json', 'model.safetensors'].map((f) => path.join(TINY_MARIAN, f));
export const TINY_GPT2 = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'fixtures', 'gpt2_tiny', 'hub');
export const TINY_GPT2_FILES = ['config.json', 'vocab.json', 'merges.txt', 'model.safetensors'].map((f) => path.join(TINY_GPT2, f));
const TINY_FILES = { pretrained: TINY_BERT_FILES, translation: TINY_MARIAN_FILES, writing: TINY_GPT2_FILES };

/** Drops files on the open panel's drop zone, as a user drags them from a file manager. */
export async function dropFiles(page, files) {
  // As base64: Playwright serialises an array number by number (Marian's five files, 800 KB, took 5.6 s so).
  const payload = files.map((f) => ({ name: path.basename(f), base64: readFileSync(f).toString('base64') }));
  await page.evaluate((items) => {
    const transfer = new DataTransfer();
    for (const { name, base64 } of items) transfer.items.add(new File([Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))], name));
    const zone = document.getElementById('open-drop');
    for (const type of ['dragenter', 'dragover', 'drop']) zone.dispatchEvent(new DragEvent(type, { dataTransfer: transfer, bubbles: true, cancelable: true }));
  }, payload);
}

export async function openCheckpointIfAsked(page, files) {
  const input = await page.waitForSelector('#open-files, .lab-section, #progress-text', { state: 'attached', timeout: 30000 })
    .then(() => page.$('#open-files'));
  if (!input) return;
  files ??= TINY_FILES[new URL(page.url()).searchParams.get('lab')] ?? TINY_BERT_FILES;
  await input.setInputFiles(files);
  await page.waitForFunction(() => ['open', 'empty'].includes(document.getElementById('panel-open')?.dataset.state)
    && document.getElementById('open-status')?.textContent.startsWith('Open') || document.getElementById('open-status')?.dataset.status === 'bad', null, { timeout: 30000 });
}

/**
 * A screenshot for a person to look at, written only when the run asks: SCREENSHOTS=dir writes
 * dir/name (the folder made if needed); without it nothing is written. target: a page or a locator.
 * No test asserts on these (a screenshot a test compares, first_screen_support.mjs's, is taken there).
 */
export async function screenshotIfAsked(target, name) {
  const dir = process.env.SCREENSHOTS;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  await target.screenshot({ path: path.join(dir, name) });
}

/**
 * Waits until the worker has built a model (the progress line has a step), or, for a lab without
 * training, until every section has been computed and shown.
 */
export async function waitConfigured(page, timeout = 30000) {
  await page.waitForFunction(() => {
    if (document.getElementById('progress-text')) return document.getElementById('progress-text').dataset.step !== undefined;
    // A section that does not apply to the open model is hidden (section_panel.js's setApplies): none of its figures are owed.
    const sections = [...document.querySelectorAll('.lab-section')].filter((s) => !s.hidden);
    return sections.length > 0 && sections.every((s) => s.dataset.state === 'shown');
  }, null, { timeout });
  // Then let the first render of every view finish (it is batched into animation frames), so that
  // measurements "while training" start when training does.
  await page.evaluate(() => new Promise((resolve) => {
    let frames = 0;
    const next = () => (++frames >= 5 ? requestIdleCallback(() => resolve(), { timeout: 1000 }) : requestAnimationFrame(next));
    requestAnimationFrame(next);
  }));
}

/**
 * Before the page loads: every training loss its worker posts is kept in window.__losses (the bits a run
 * trains, to compare two runs: tests/browser/service_worker.test.mjs, pause_snapshot.test.mjs).
 */
export async function recordLosses(page) {
  await page.addInitScript(() => {
    const PageWorker = window.Worker;
    window.__losses = [];
    window.Worker = class extends PageWorker {
      constructor(...args) {
        super(...args);
        this.addEventListener('message', (e) => { if (e.data?.type === 'progress') window.__losses.push(...e.data.losses); });
      }
    };
  });
}

/** Presses play and waits until training is done and the page has drawn every panel it owes. */
export async function trainToEnd(page, timeout = 90000) {
  await page.click('#play');
  // Polled every 100 ms, not every animation frame: the test should not add work to the frames it watches.
  await page.waitForFunction(() => document.getElementById('progress-text').dataset.state === 'done', null, { timeout, polling: 100 });
  await waitDrawn(page);
}

/** The Writing lab's ids line ("ids: 1 2 3 · written: 4 5") -> {prompt: [id], written: [id]}. */
export async function writtenIds(page) {
  const t = (await page.textContent('[data-figure="written-ids"]')).trim();
  const m = /^ids: ([\d ]+) · written: ?([\d ]*)$/.exec(t);
  return { prompt: m[1].split(' ').map(Number), written: m[2].trim() ? m[2].trim().split(' ').map(Number) : [] };
}

/**
 * A bars figure's values read back from its pixels (bars_figure.js's data-bars layout): each bar's top is
 * the first pixel of its colour from above. -> {values, colours, hi, plotH (CSS px), highlight}.
 */
export async function readBars(page, selector) {
  return page.$eval(selector, (canvas) => {
    const g = JSON.parse(canvas.dataset.bars);
    const k = canvas.width / canvas.getBoundingClientRect().width;
    const ctx = canvas.getContext('2d');
    const at = (x, y) => Array.from(ctx.getImageData(Math.floor(x * k), Math.floor(y * k), 1, 1).data.slice(0, 3));
    const same = (a, b) => a.every((c, i) => Math.abs(c - b[i]) <= 2);
    const values = [], colours = [];
    const background = at(g.left / 2, g.top - 4); // above the plot, under the title
    for (let i = 0; i < g.n; i++) {
      const x = g.left + (i + 0.5) * g.barW;
      // A bar is drawn over the grid lines: from the zero line up, its colour until its top.
      const colour = at(x, g.zeroY - 1.5);
      if (same(colour, background)) { values.push(0); colours.push(colour.join(',')); continue; }
      let y = g.zeroY - 1.5;
      while (y > g.top - 3 && same(at(x, y - 1 / k), colour)) y -= 1 / k;
      values.push(((g.zeroY - y) / (g.zeroY - g.top)) * g.hi);
      colours.push(colour.join(','));
    }
    return { values, colours, hi: g.hi, plotH: g.zeroY - g.top, highlight: g.highlight };
  });
}

/** Waits until the lab has drawn every part it deferred (panels off screen wait while training). */
export async function waitDrawn(page, timeout = 10000) {
  await page.waitForFunction(() => document.querySelector('[data-drawn]')?.dataset.drawn === 'all', null, { timeout, polling: 100 });
}

/**
 * Starts a log of the page's section requests and the worker's answers to them (once per page), through
 * the page's worker client (web/ui/worker_client.js: window.attnlabWorker). -> how many requests the
 * page has sent for `section` since the log began: sectionsAnswered's `after`.
 */
export async function logSections(page, section) {
  return page.evaluate((section) => {
    const client = window.attnlabWorker;
    if (!client.sectionLog) {
      // sent: section id -> requests sent; open: section id -> the request in flight (a section panel
      // has one at a time: web/ui/panels/section.js); answers: the answers to those; drawn: the answers
      // whose drawing frame has run.
      const log = client.sectionLog = { sent: {}, open: new Map(), answers: 0, drawn: 0 };
      const send = client.send.bind(client);
      client.send = (type, fields = {}) => {
        if (type === 'section') {
          log.sent[fields.section] = (log.sent[fields.section] ?? 0) + 1;
          log.open.set(fields.section, fields.request);
        }
        send(type, fields);
      };
      // Added after the page's own listener, so it runs after it: the page has asked for the frame
      // that draws the answer, and this frame callback runs after the page's in that frame.
      client.worker.addEventListener('message', ({ data }) => {
        const answered = data?.type === 'section' ? log.open.get(data.section) === data.request
          : data?.type === 'error' && data.request === 'section' && log.open.has(data.section);
        if (!answered) return;
        log.open.delete(data.section);
        const answer = ++log.answers;
        requestAnimationFrame(() => { log.drawn = Math.max(log.drawn, answer); });
      });
    }
    return client.sectionLog.sent[section] ?? 0;
  }, section ?? null);
}

/**
 * Waits until the page shows the worker's answer to every section request logged (logSections), with at
 * least one more request for `section` than `after` when given: none is in flight, the frame that draws
 * the last answer has run, and nothing is left to draw. A lab that trains defers the parts off screen
 * (draw_scheduler.js), so this is for a page that does not train meanwhile.
 */
export async function sectionsAnswered(page, { section = null, after = null, timeout = 20000 } = {}) {
  await page.waitForFunction(({ section, after }) => {
    const log = window.attnlabWorker.sectionLog;
    return (after === null || (log.sent[section] ?? 0) > after) && log.open.size === 0 && log.drawn === log.answers
      && document.querySelector('[data-drawn]')?.dataset.drawn === 'all';
  }, { section, after }, { timeout });
}

export async function metric(page, id) {
  const value = await page.getAttribute(`#evaluation [data-metric="${id}"]`, 'data-value');
  return value === null ? null : Number(value);
}

/** Sets a control and commits it (a text field: filled, then blur fires 'change'; a slider: moved). */
export async function setField(page, name, value) {
  const field = page.locator(`#prop-${name}`);
  // A field in a closed fold (the settings' "Advanced": the backend) is reached by opening it, as a student would.
  await field.evaluate((e) => { const fold = e.closest('details'); if (fold) fold.open = true; });
  const type = await field.getAttribute('type');
  if (type === 'checkbox') await field.setChecked(!!value);
  else if (type === 'range') {
    // A slider is dragged, not typed: its value set and its input and change events sent, as a drag does.
    await field.evaluate((e, v) => {
      e.value = v;
      e.dispatchEvent(new Event('input', { bubbles: true }));
      e.dispatchEvent(new Event('change', { bubbles: true }));
    }, String(value));
  }
  else if (await field.evaluate((e) => e.tagName === 'SELECT')) await field.selectOption(String(value));
  else {
    await field.fill(String(value));
    await field.blur();
  }
}

/** A drawn colour [r, g, b] back to its value in [0, 1]: the nearest entry of a palette's 256-entry table. */
export function paletteValue(lut, [r, g, b]) {
  let best = 0, bestDistance = Infinity;
  for (let i = 0; i < 256; i++) {
    const d = (lut[3 * i] - r) ** 2 + (lut[3 * i + 1] - g) ** 2 + (lut[3 * i + 2] - b) ** 2;
    if (d < bestDistance) { bestDistance = d; best = i; }
  }
  return best / 255;
}

/**
 * Reads a heatmap canvas back into values: the colour at each cell's centre, mapped to the nearest
 * entry of the palette's 256-entry table (web/shared/palette.js). -> rows x cols array of arrays.
 */
export async function readHeatmap(page, selector, palette = 'viridis') {
  const { layout, pixels } = await page.evaluate((sel) => {
    const canvas = document.querySelector(sel);
    const layout = JSON.parse(canvas.dataset.layout);
    const ctx = canvas.getContext('2d');
    const pixels = [];
    for (let r = 0; r < layout.rows; r++) {
      for (let c = 0; c < layout.cols; c++) {
        const x = Math.floor(layout.x + (c + 0.5) * layout.cellW), y = Math.floor(layout.y + (r + 0.5) * layout.cellH);
        pixels.push(Array.from(ctx.getImageData(x, y, 1, 1).data.slice(0, 3)));
      }
    }
    return { layout, pixels };
  }, selector);
  const values = [];
  for (let r = 0; r < layout.rows; r++) values.push(pixels.slice(r * layout.cols, (r + 1) * layout.cols).map((p) => paletteValue(PALETTES[palette], p)));
  return values;
}

/** Whether, in every row, the cell at column target(row) is the brightest. -> {ok, failures} */
export function brightestAt(matrix, target) {
  const failures = [];
  matrix.forEach((row, r) => {
    const c = target(r);
    const max = Math.max(...row);
    if (row[c] < max) failures.push(`row ${r}: cell ${c} = ${row[c].toFixed(2)}, brightest ${max.toFixed(2)} at ${row.indexOf(max)}`);
  });
  return { ok: failures.length === 0, failures };
}

/**
 * A canvas's pixels -> {width, height, data: Uint8Array [height * width * 4], RGBA}. The bytes cross from the
 * page as base64: Playwright serialises an array number by number, and Array.from(imageData.data) of a
 * 580x760 canvas took 14 s that way (a 208x134 one 1 s); base64 takes milliseconds.
 */
export async function canvasPixels(page, selector) {
  const { width, height, base64 } = await page.$eval(selector, (c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height);
    let text = '';
    for (let i = 0; i < d.data.length; i += 0x8000) text += String.fromCharCode.apply(null, d.data.subarray(i, i + 0x8000));
    return { width: d.width, height: d.height, base64: btoa(text) };
  });
  return { width, height, data: new Uint8Array(Buffer.from(base64, 'base64')) };
}

/**
 * Watches the main thread: 'longtask' entries (tasks over 50 ms) and the largest gap between
 * animation frames. start() in the page, then stop() -> {longTasks, maxLongTaskMs, maxFrameGapMs,
 * p95FrameGapMs, frames}. Long tasks are only reported from 50 ms (the Long Tasks API's threshold).
 */
export async function startFrameMonitor(page) {
  await page.evaluate(() => {
    const m = { longTasks: [], maxGap: 0, gaps: [], last: performance.now(), on: true };
    window.__frameMonitor = m;
    m.start = performance.now();
    m.longTaskTimes = [];
    m.observer = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        m.longTasks.push(e.duration);
        m.longTaskTimes.push(e.startTime - m.start);
      }
    });
    m.observer.observe({ type: 'longtask', buffered: false });
    const tick = (t) => {
      if (!m.on) return;
      m.maxGap = Math.max(m.maxGap, t - m.last);
      m.gaps.push(t - m.last);
      m.last = t;
      requestAnimationFrame(tick);
    };
    requestAnimationFrame((t) => { m.last = t; requestAnimationFrame(tick); });
  });
  return async () => page.evaluate(() => {
    const m = window.__frameMonitor;
    m.on = false;
    m.observer.disconnect();
    const sorted = [...m.gaps].sort((a, b) => a - b);
    const p95FrameGapMs = sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(0.95 * sorted.length))] : 0;
    return { longTasks: m.longTasks, longTaskTimes: m.longTaskTimes, trainingMs: performance.now() - m.start, maxLongTaskMs: Math.max(0, ...m.longTasks),
      maxFrameGapMs: m.maxGap, p95FrameGapMs, frames: m.gaps.length };
  });
}

/**
 * A browser with a fresh profile and no server, for pages opened from file:// (the single file): only
 * file:, blob: and data: requests pass; every other request is aborted and listed in `blocked`.
 */
export async function startOffline() {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'attnlab-profile-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, args: ARGS, viewport: { width: 1400, height: 1000 },
  });
  const blocked = [];
  const requested = [];
  await context.route('**', (route) => {
    const url = route.request().url();
    if (/^(file|blob|data):/.test(url)) return route.continue();
    blocked.push(url);
    return route.abort();
  });
  context.on('request', (r) => requested.push(r.url()));
  return {
    context, blocked, requested,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Opens a file:// URL and records what went wrong, as openPage does. -> {page, problems} */
export async function openFile(offline, fileUrl) {
  const page = await offline.context.newPage();
  const problems = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} (${r.failure()?.errorText})`));
  await page.goto(fileUrl);
  await openCheckpointIfAsked(page);
  await waitConfigured(page);
  return { page, problems };
}
