#!/usr/bin/env node
// A student's first and second visit on a slow network, for each lab: the time from typing the address
// to the lab's first drawn figure (a training lab: its model built and its first step shown; a lab that
// opens a checkpoint: its panel ready for the files), with an empty cache and again the next day (the
// same browser profile, the service worker installed). Medians of several runs, each in a fresh profile.
// The numbers go in docs/benchmarks.md; no test asserts them.
//
//   node benchmarks/page_first_visit.mjs [--runs=3] [--only=alignment,lookup] [--rtt=150] [--kbps=1638.4] [--root=DIR]
//
// --root serves another copy of the site (an older build, to compare; public/ otherwise).
//
// The network is Chrome DevTools' "Slow 4G" (Lighthouse's mobile throttling): 150 ms round trip,
// 1.6384 Mbit/s down, applied by a proxy in front of the site's own server (web/cli/static_server.mjs,
// which compresses as a static host does). A proxy rather than DevTools' emulation because DevTools
// throttles a page's requests but not its service worker's, and the service worker's first install
// downloads the site: every byte any part of the browser asks for goes through the one slow link here.
// Each response waits one round trip, then shares the link's bandwidth with every other response, in
// 16 KB slices, in the order they were asked for.
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { startServer } from '../web/cli/static_server.mjs';

const args = Object.fromEntries(process.argv.slice(2).map((a) => {
  const [key, value = 'true'] = a.replace(/^--/, '').split('=');
  return [key, value];
}));
const RUNS = Number(args.runs ?? 3);
const RTT_MS = Number(args.rtt ?? 150);
const BYTES_PER_S = Number(args.kbps ?? 1638.4) * 1000 / 8;
const LABS = ['alignment', 'lookup', 'count', 'scaled', 'pretrained', 'translation', 'writing', 'induction'];
const ONLY = args.only ? args.only.split(',') : LABS;
const SLICE = 16 * 1024;

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** The slow link: a proxy to `upstream` with one round trip per request and one shared bandwidth. */
function startSlowLink(upstream) {
  let linkFreeAt = 0; // when the link has sent every slice queued so far (ms, performance.now())
  let bytes = 0;
  let requests = 0;
  const send = (res, chunk) => new Promise((resolve) => {
    const start = Math.max(performance.now(), linkFreeAt);
    linkFreeAt = start + (chunk.length / BYTES_PER_S) * 1000;
    setTimeout(() => { res.write(chunk); resolve(); }, linkFreeAt - performance.now());
  });
  const server = http.createServer((req, res) => {
    requests += 1;
    const asked = performance.now();
    if (args.log) res.on('finish', () => console.log(`   ${(asked / 1000).toFixed(2)} -> ${(performance.now() / 1000).toFixed(2)} ${req.url}`));
    setTimeout(() => {
      const forward = http.request(new URL(req.url, upstream), { method: req.method, headers: req.headers }, async (up) => {
        res.writeHead(up.statusCode, up.headers);
        const chunks = [];
        for await (const chunk of up) chunks.push(chunk);
        const body = Buffer.concat(chunks);
        bytes += body.length;
        for (let at = 0; at < body.length; at += SLICE) await send(res, body.subarray(at, at + SLICE));
        res.end();
      });
      forward.on('error', () => res.destroy());
      req.pipe(forward);
    }, RTT_MS);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    url: `http://127.0.0.1:${server.address().port}/`,
    take: () => { const counts = { bytes, requests }; bytes = 0; requests = 0; return counts; },
    close: () => new Promise((r) => { server.close(r); server.closeAllConnections(); }),
  })));
}

// The lab's first figure: a training lab's first step (its progress line has one), a computed lab's
// sections shown, a checkpoint lab's panel ready for the files.
const drawn = () => {
  const progress = document.getElementById('progress-text');
  if (progress) return progress.dataset.step !== undefined;
  const input = document.getElementById('open-files');
  if (input && document.getElementById('panel-open')?.dataset.state) return true;
  const sections = [...document.querySelectorAll('.lab-section')].filter((s) => !s.hidden);
  return sections.length > 0 && sections.every((s) => s.dataset.state === 'shown');
};

async function visit(context, url, link) {
  const page = await context.newPage();
  link.take();
  const start = performance.now();
  await page.goto(url, { waitUntil: 'commit' });
  await page.waitForFunction(drawn, null, { timeout: 120000, polling: 20 });
  const ms = performance.now() - start;
  const counts = link.take();
  const threads = await page.evaluate(() => document.getElementById('badge-version')?.dataset.build ?? '');
  // The next day: the service worker has finished installing (a first visit leaves it caching the site).
  await page.evaluate(() => navigator.serviceWorker?.ready);
  await page.close();
  return { ms, build: threads, counts };
}

const site = await startServer({ port: 0, ...(args.root ? { root: path.resolve(args.root) } : {}) });
const link = await startSlowLink(site.url);
console.log(`Slow link: ${RTT_MS} ms round trip, ${(BYTES_PER_S * 8 / 1e6).toFixed(4)} Mbit/s; ${RUNS} runs a lab, each in a fresh profile`);
console.log('lab          first visit (median, runs)            second visit              first visit: bytes, requests');
try {
  for (const lab of ONLY) {
    const first = [];
    const second = [];
    let counts = null;
    let builds = '';
    for (let run = 0; run < RUNS; run++) {
      const profile = mkdtempSync(path.join(os.tmpdir(), 'attnlab-visit-'));
      const context = await chromium.launchPersistentContext(profile, {
        executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', headless: true,
        args: ['--no-sandbox', '--disable-gpu-sandbox', '--no-first-run', '--disable-quic',
          '--disable-background-networking', '--disable-component-update', '--disable-sync'],
        viewport: { width: 1280, height: 800 },
      });
      try {
        const a = await visit(context, `${link.url}?lab=${lab}`, link);
        counts = a.counts;
        const b = await visit(context, `${link.url}?lab=${lab}`, link);
        first.push(a.ms);
        second.push(b.ms);
        builds = `${a.build} then ${b.build}`;
      } finally {
        await context.close();
        rmSync(profile, { recursive: true, force: true });
      }
    }
    const list = (xs) => xs.map((x) => (x / 1000).toFixed(2)).join(' ');
    console.log(`${lab.padEnd(12)} ${(median(first) / 1000).toFixed(2)} s (${list(first)})`.padEnd(50)
      + `${(median(second) / 1000).toFixed(2)} s (${list(second)})`.padEnd(26)
      + `${(counts.bytes / 1e6).toFixed(2)} MB, ${counts.requests}   [${builds}]`);
  }
} finally {
  await link.close();
  await site.close();
}
