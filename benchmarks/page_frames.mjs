#!/usr/bin/env node
// How smooth the page stays while a lab trains: the longest main-thread task (every task, from a
// Chromium performance trace, not only the Long Tasks API's >= 50 ms ones) and the p95 and largest
// gap between animation frames, over several runs of the default copy training and of the pointer
// task. Figures go in docs/benchmarks.md. Targets on a quiet machine: longest task <= 32 ms, p95 frame
// gap <= 20 ms. These are timings: a benchmark prints them; no test asserts them.
//
//   node benchmarks/page_frames.mjs [--runs=5] [--only=copy,pointer,count,lookup] [--profile]
//
// --profile also prints, per run, how long each part of the page took to draw (web/ui/draw_scheduler.js
// keeps the last 512 draws), the functions with the most self time (a V8 CPU profile) and the trace
// events with the most time inside main-thread tasks longer than 16 ms: where a stall comes from.
import { openPage, startFrameMonitor, startLab, trainToEnd } from '../tests/browser/support.mjs';

const args = Object.fromEntries(process.argv.slice(2).map((a) => {
  const [key, value = 'true'] = a.replace(/^--/, '').split('=');
  return [key, value];
}));
const RUNS = Number(args.runs ?? 5);
const PROFILE = args.profile === 'true';
const ALL_CASES = [
  { id: 'copy', name: 'copy (defaults: 200 steps)', query: '?lab=alignment&task=copy&seed=0' },
  { id: 'pointer', name: 'pointer (defaults: 350 steps)', query: '?lab=alignment&task=pointer&seed=0' },
  { id: 'count', name: 'one query (defaults: 5,001 steps)', query: '?lab=count' },
  { id: 'lookup', name: 'lookup (1,000 steps)', query: '?lab=lookup&steps=1000' },
];
// --only=count,lookup runs those cases alone.
const CASES = args.only ? ALL_CASES.filter((c) => args.only.split(',').includes(c.id)) : ALL_CASES;
const TRACE_CATEGORIES = ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'v8.execute', 'blink.user_timing'];

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

// The page renderer's main-thread top-level tasks from a trace: [{start, dur}] in ms. Of the
// renderer main threads in the trace, the page's is the one that ran the most tasks.
function mainThreadTasks(events) {
  let best = [];
  for (const t of events.filter((e) => e.name === 'thread_name' && e.args?.name === 'CrRendererMain')) {
    const tasks = events.filter((e) => e.pid === t.pid && e.tid === t.tid && e.ph === 'X' && e.name === 'RunTask');
    if (tasks.length > best.length) best = tasks;
  }
  return best.map((e) => ({ start: e.ts / 1000, dur: e.dur / 1000 }));
}

async function traced(page, run) {
  const cdp = await page.context().newCDPSession(page);
  const events = [];
  cdp.on('Tracing.dataCollected', ({ value }) => events.push(...value));
  const done = new Promise((resolve) => cdp.once('Tracing.tracingComplete', resolve));
  await cdp.send('Tracing.start', { categories: TRACE_CATEGORIES.join(','), transferMode: 'ReportEvents' });
  if (PROFILE) {
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
    await cdp.send('Profiler.start');
  }
  const result = await run();
  const profile = PROFILE ? (await cdp.send('Profiler.stop')).profile : null;
  await cdp.send('Tracing.end');
  await done;
  await cdp.detach();
  return { result, tasks: mainThreadTasks(events), profile, events };
}

// Trace events (layout, style, paint, script) by total time inside main-thread tasks over 16 ms.
function hotEvents(events, tasks) {
  const long = tasks.filter((t) => t.dur > 16);
  const inside = (e) => long.some((t) => e.ts / 1000 >= t.start && e.ts / 1000 < t.start + t.dur);
  const total = new Map();
  for (const e of events) {
    if (e.ph !== 'X' || e.name === 'RunTask' || !e.dur || !inside(e)) continue;
    total.set(e.name, (total.get(e.name) ?? 0) + e.dur / 1000);
  }
  return [...total.entries()].sort((a, b) => b[1] - a[1]).slice(0, 10);
}

// Self time per function over the profile samples that fall inside long tasks (> 16 ms).
function hotFunctions(profile, tasks) {
  if (!profile) return [];
  const long = tasks.filter((t) => t.dur > 16);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  let t = profile.startTime / 1000; // µs -> ms, the trace's clock
  profile.samples.forEach((id, i) => {
    t += profile.timeDeltas[i] / 1000;
    if (!long.some((task) => t >= task.start && t <= task.start + task.dur)) return;
    const f = byId.get(id).callFrame;
    const key = `${f.functionName || '(anonymous)'} ${f.url.split('/').pop()}:${f.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + profile.timeDeltas[i] / 1000);
  });
  return [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 8);
}

const lab = await startLab();
try {
  console.log(`page frames while training: ${RUNS} runs per case (Chromium ${lab.context.browser()?.version() ?? ''})`);
  for (const c of CASES) {
    const rows = [];
    for (let r = 0; r < RUNS; r++) {
      const { page } = await openPage(lab, c.query);
      const { result: frames, tasks, profile, events } = await traced(page, async () => {
        const stop = await startFrameMonitor(page);
        await trainToEnd(page, 300000);
        const frames = await stop();
        frames.draws = await page.evaluate(() => document.querySelector('[data-drawn]').drawTimes.summary());
        return frames;
      });
      const longest = Math.max(0, ...tasks.map((t) => t.dur));
      rows.push({ longest, p95: frames.p95FrameGapMs, maxGap: frames.maxFrameGapMs, tasks: tasks.length, seconds: frames.trainingMs / 1000 });
      console.log(`  ${c.name} run ${r + 1}: longest main-thread task ${longest.toFixed(1)} ms over ${tasks.length} tasks; `
        + `frame gap p95 ${frames.p95FrameGapMs.toFixed(1)} ms, max ${frames.maxFrameGapMs.toFixed(1)} ms; ${(frames.trainingMs / 1000).toFixed(1)} s`);
      if (PROFILE) {
        for (const [part, xs] of Object.entries(frames.draws)) console.log(`      draw ${part}: ${xs.length} times, median ${median(xs).toFixed(1)} ms, max ${Math.max(...xs).toFixed(1)} ms`);
      }
      for (const [name, ms] of hotFunctions(profile, tasks)) console.log(`      ${ms.toFixed(1).padStart(7)} ms  ${name}`);
      if (PROFILE) for (const [name, ms] of hotEvents(events, tasks)) console.log(`      ${ms.toFixed(1).padStart(7)} ms  [trace] ${name}`);
      await page.close();
    }
    console.log(`${c.name}: median longest task ${median(rows.map((x) => x.longest)).toFixed(1)} ms, `
      + `median p95 frame gap ${median(rows.map((x) => x.p95)).toFixed(1)} ms, median max gap ${median(rows.map((x) => x.maxGap)).toFixed(1)} ms `
      + `(worst longest task ${Math.max(...rows.map((x) => x.longest)).toFixed(1)} ms)`);
  }
} finally {
  await lab.close();
}
