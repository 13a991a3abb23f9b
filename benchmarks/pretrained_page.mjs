#!/usr/bin/env node
// The Pretrained lab in the browser with a bert-base-shaped checkpoint (benchmarks/bert_torch.py writes
// one with random weights: 110M parameters, 440 MB fp32): the time from choosing the folder's files to
// the first drawn attention, the peak WebAssembly memory against the checkpoint's size (issue 13:
// <= 1.5x), and how smooth the page stays while it loads (longest main-thread task, largest and p95
// frame gap: the worker reads the file). Medians of several runs, each in a fresh tab.
//
//   /usr/bin/python3 benchmarks/bert_torch.py --no-time     # writes /tmp/attnlab-bert-base once
//   node benchmarks/pretrained_page.mjs [--dir=/tmp/attnlab-bert-base] [--runs=3]
import { statSync } from 'node:fs';
import path from 'node:path';
import { startFrameMonitor, startLab, waitConfigured, waitDrawn } from '../tests/browser/support.mjs';

const args = Object.fromEntries(process.argv.slice(2).map((a) => {
  const [key, value = 'true'] = a.replace(/^--/, '').split('=');
  return [key, value];
}));
const DIR = args.dir ?? '/tmp/attnlab-bert-base';
const RUNS = Number(args.runs ?? 3);
const FILES = ['config.json', 'vocab.txt', 'model.safetensors', 'tokenizer_config.json'].map((f) => path.join(DIR, f));
const checkpointBytes = statSync(FILES[2]).size;
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const lab = await startLab();
const rows = [];
try {
  for (let run = 0; run < RUNS; run++) {
    const page = await lab.context.newPage();
    await page.goto(`${lab.url}?lab=pretrained`);
    await page.waitForFunction(() => [...document.querySelectorAll('.lab-section')].every((s) => s.dataset.state === 'waiting'));
    const stop = await startFrameMonitor(page);
    const t0 = Date.now();
    await page.setInputFiles('#open-files', FILES);
    await page.waitForFunction(() => document.getElementById('panel-open').dataset.state === 'open', null, { timeout: 300000, polling: 100 });
    const loadedMs = Date.now() - t0;
    await waitConfigured(page, 300000);
    await waitDrawn(page, 60000);
    const firstAttentionMs = Date.now() - t0;
    const frames = await stop();
    const heapBytes = Number(await page.getAttribute('#panel-open', 'data-heap-bytes'));
    if (args.verbose) console.log('long tasks (ms after the files were chosen, duration):', frames.longTaskTimes.map((t, i) => `${Math.round(t)}:${Math.round(frames.longTasks[i])}`).join(' '));
    rows.push({ loadedMs, firstAttentionMs, heapBytes, maxLongTaskMs: frames.maxLongTaskMs, maxFrameGapMs: frames.maxFrameGapMs, p95FrameGapMs: frames.p95FrameGapMs });
    console.log(`run ${run + 1}: loaded ${loadedMs} ms, first attention drawn ${firstAttentionMs} ms, WASM memory ${(heapBytes / 1e6).toFixed(0)} MB, `
      + `longest task ${frames.maxLongTaskMs.toFixed(0)} ms, frame gap max ${frames.maxFrameGapMs.toFixed(0)} / p95 ${frames.p95FrameGapMs.toFixed(1)} ms`);
    await page.close();
  }
} finally {
  await lab.close();
}
const m = (k) => median(rows.map((r) => r[k]));
console.log(`\ncheckpoint ${DIR}: model.safetensors ${(checkpointBytes / 1e6).toFixed(1)} MB; ${RUNS} runs, medians:`);
console.log(`- files chosen -> checkpoint open: ${m('loadedMs')} ms; -> first attention drawn: ${m('firstAttentionMs')} ms`);
console.log(`- peak WebAssembly memory ${(m('heapBytes') / 1e6).toFixed(0)} MB = ${(m('heapBytes') / checkpointBytes).toFixed(2)}x the checkpoint (target <= 1.5x)`);
console.log(`- while loading: longest main-thread task ${m('maxLongTaskMs').toFixed(0)} ms (the Long Tasks API reports from 50 ms; 0 = none), `
  + `largest frame gap ${m('maxFrameGapMs').toFixed(0)} ms, p95 ${m('p95FrameGapMs').toFixed(1)} ms`);
