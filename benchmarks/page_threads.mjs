#!/usr/bin/env node
// The page's training speed with the SIMD128 + threads module (served through the service worker, so
// cross-origin isolated) and with the single-threaded SIMD128 module (no service worker), in one run of
// headless Chromium on this machine, interleaved. Prints the worker's own steps per second of
// computing (the 'progress' message's stepsPerSecond) for each lab and run. docs/benchmarks.md.
//   node benchmarks/page_threads.mjs [--rounds 2]
import { startLab, waitConfigured, trainToEnd } from '../tests/browser/support.mjs';

const rounds = Number(process.argv[process.argv.indexOf('--rounds') + 1]) || 2;
const RUNS = [
  ['alignment (copy, batch 32)', '?lab=alignment&task=copy&seed=0&batch=32&steps=300&speed=max'],
  ['lookup', '?lab=lookup&seed=0&steps=300&speed=max'],
  ['count', '?lab=count&seed=0&steps=300&speed=max'],
];

async function speed(lab, query) {
  const page = await lab.context.newPage();
  await page.addInitScript(() => {
    const PageWorker = window.Worker;
    window.Worker = class extends PageWorker {
      constructor(...args) {
        super(...args);
        this.addEventListener('message', (e) => { if (e.data?.type === 'progress') window.__rate = e.data.stepsPerSecond; });
      }
    };
  });
  await page.goto(lab.url + query);
  await waitConfigured(page, 60000);
  await trainToEnd(page, 600000);
  const result = { rate: await page.evaluate(() => window.__rate), badge: await page.textContent('#badge-version') };
  await page.close();
  return result;
}

const threaded = await startLab({ serviceWorker: true });
const single = await startLab();
try {
  await speed(threaded, RUNS[0][1]); // the first visit installs the worker and reloads
  for (const [name, query] of RUNS) {
    for (let r = 0; r < rounds; r++) {
      for (const [label, lab] of [['threads', threaded], ['single', single]]) {
        const { rate, badge } = await speed(lab, query);
        console.log(`${name}\t${label}\t${rate.toFixed(1)} steps/s\t${badge}`);
      }
    }
  }
} finally {
  await threaded.close();
  await single.close();
}
