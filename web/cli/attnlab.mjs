#!/usr/bin/env node
// attnlab: the labs headless (autograding, CI, slide figures). Same trainer as the page
// (web/training/session.js), same WASM module. Exit codes: 0 ok, 2 bad usage or settings, 1 failure.
// Every error is one line on stderr (the stack too only with ATTNLAB_DEBUG=1), and every file flag is
// checked before training, so a run never fails at its end on a path it could have refused at the start.
import { checkFiles, cut, FileError, LABS, parseArgs, shown, USAGE, UsageError } from './args.mjs';
import { trainLookup } from './lookup.mjs';
import { writeFigures } from './figure.mjs';
import { loadAttnLabNode } from '../node_loader.mjs';
import { TrainingSession } from '../training/session.js';
import { WebGpuProbe } from '../webgpu/probe.js';
import { readFileSync, writeFileSync } from 'node:fs';
import { parseSafetensors, loadStateDict, saveStateDict } from '../io/state_dict.js';

/**
 * The file's metadata (written by --save, or by the notebook snippet in docs/weights.md) against the run
 * -> what the file holds, when that is not what this run trains; else null. A file that says nothing
 * loads as before. Refused rather than followed, so that a run is what its flags say.
 */
function weightsRefusal(metadata, task, heads) {
  const m = metadata ?? {};
  if (m.lab !== undefined && m.lab !== 'alignment') {
    return `${cut(m.lab)} weights (metadata lab=${cut(m.lab)}); --lab alignment needs alignment weights`;
  }
  if (m.task !== undefined && m.task !== task) return `${cut(m.task)} weights (metadata task=${cut(m.task)}); --task ${task} needs ${task} weights`;
  if (m.heads !== undefined && m.heads !== String(heads)) {
    return `weights for heads=${cut(m.heads)} (metadata); this run has ${heads} heads: pass --heads ${cut(m.heads)}`;
  }
  return null;
}

async function main(argv) {
  let args;
  try {
    args = parseArgs(argv);
    if (!args.help && !args.labs && !args.version) checkFiles(args);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(error instanceof FileError ? `attnlab: ${error.message}\n` : `attnlab: ${error.message}\n\n${USAGE}\n`);
    return 2;
  }
  if (args.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (args.labs) {
    for (const [id, lab] of Object.entries(LABS)) process.stdout.write(`${id.padEnd(10)} ${lab.title} (course notebook ${lab.notebook})\n`);
    return 0;
  }
  const lab = await loadAttnLabNode({ build: args.build ?? 'auto' });
  if (args.version) {
    process.stdout.write(`${lab.version}\n`);
    return 0;
  }
  const say = (record, text) => process.stdout.write(args.json ? `${JSON.stringify(record)}\n` : `${text}\n`);
  let gpu = { attention: null, reason: 'not requested' };
  if (args.backend === 'auto' || args.backend === 'webgpu') {
    const { nodeGpu } = await import('../webgpu/node_gpu.mjs');
    const { gpu: nodeGpuObject, reason } = await nodeGpu();
    gpu = nodeGpuObject ? await WebGpuProbe.probe(nodeGpuObject) : { attention: null, reason };
  }
  if (args.lab === 'lookup') return trainLookup(args, lab, gpu, say);
  const defaults = lab.AlignmentTrainer.defaults(args.task);
  const config = { task: args.task, seed: args.seed, uniqueKeys: !!args.uniqueKeys, positional: !args.noPositional };
  for (const key of ['lr', 'heads', 'dModel', 'batch']) if (args[key] !== undefined) config[key] = args[key];
  const steps = args.steps ?? defaults.steps;
  let session;
  try {
    session = TrainingSession.create({
      lab, config, backend: args.backend, gpuAttention: gpu.attention, gpuReason: gpu.reason, gpuSoftware: gpu.software,
    });
  } catch (error) {
    if (error.name !== 'AttnLabError') throw error;
    process.stderr.write(`attnlab: ${error.message}\n`);
    return 2;
  }
  if (args.load) {
    const file = shown(args.load, { tail: true });
    try {
      const { tensors, metadata } = parseSafetensors(readFileSync(args.load));
      const refusal = weightsRefusal(metadata, args.task, session.config.heads);
      if (refusal) {
        process.stderr.write(`attnlab: ${file} holds ${refusal}\n`);
        session.dispose();
        return 2;
      }
      loadStateDict(session.trainer, tensors);
    } catch (error) {
      // The state_dict's list of problems, on one line.
      process.stderr.write(`attnlab: cannot load ${file}: ${error.message.replace(/:\n- /, ': ').replace(/\n- /g, '; ').replace(/\s*\n\s*/g, ' ')}\n`);
      session.dispose();
      return 2;
    }
  }
  say({ type: 'start', task: args.task, steps, seed: args.seed, backend: session.backend, reason: session.reason,
    build: lab.build, version: lab.version },
  `Attention Lab ${lab.version}: ${args.task}, ${steps} steps, seed ${args.seed}; backend ${session.backendLabel} (${session.reason})`);

  const t0 = performance.now();
  while (session.step < steps) {
    const n = Math.min(args.every, steps - session.step);
    const { losses, accuracies } = await session.runSteps(n);
    const loss = losses[losses.length - 1], accuracy = accuracies[accuracies.length - 1];
    say({ type: 'progress', step: session.step, loss, accuracy },
      `step ${String(session.step).padStart(5)}  loss ${loss.toFixed(4)}  batch accuracy ${(100 * accuracy).toFixed(1)}%`);
  }
  const seconds = (performance.now() - t0) / 1000;
  const fallback = session.fallback;
  // A forced backend that did not run is never silent, in text or JSON mode: one line on stderr.
  if (fallback) process.stderr.write(`attnlab: warning: --backend ${args.backend} fell back at step ${fallback.fellBackAt}: ${fallback.reason}\n`);
  const e = session.evaluate();
  const snapshot = session.takeSnapshot();
  const attention = [];
  for (let t = 0; t < snapshot.T; t++) attention.push(Array.from(snapshot.weightsMean.slice(t * snapshot.S, (t + 1) * snapshot.S)));
  const sample = session.fixedSample();
  const record = {
    type: 'final', task: args.task, uniqueKeys: !!args.uniqueKeys, steps: session.step, seed: args.seed,
    backend: session.backend, reason: session.reason, build: lab.build, stepsPerSecond: session.step / seconds,
    ...(fallback ? { requestedBackend: fallback.requested, fellBackAt: fallback.fellBackAt } : {}),
    accuracy: e.accuracy, loss: e.loss, evaluatedOn: e.samples, patternMass: e.patternMass,
    bestHead: e.bestHead, bestHeadMass: e.bestHeadMass, headMass: e.headMass,
    ...(args.task === 'pointer' ? { bayesCeiling: e.bayesCeiling } : {}),
    sample: { keys: Array.from(sample.keys), values: Array.from(sample.values), targets: Array.from(sample.targets),
      ...(sample.query !== undefined ? { query: sample.query } : {}), predictions: Array.from(snapshot.predictions) },
    attention,
  };
  const pattern = { copy: 'diagonal', reverse: 'anti-diagonal', pointer: 'matching keys' }[args.task];
  say(record, [
    `accuracy on ${e.samples} fresh samples: ${(100 * e.accuracy).toFixed(2)}%` +
      (args.task === 'pointer' ? ` (Bayes ceiling of this batch: ${(100 * e.bayesCeiling).toFixed(2)}%)` : ''),
    `head-mean attention on the ${pattern}: ${e.patternMass.toFixed(3)}; best head ${e.bestHead}: ${e.bestHeadMass.toFixed(3)}`,
    `${(session.step / seconds).toFixed(1)} steps/s on ${session.backendLabel}`,
  ].join('\n'));
  if (args.png || args.svg) {
    try {
      const lines = await writeFigures({ config: session.config, sample, inspection: snapshot, step: session.step, png: args.png, svg: args.svg });
      for (const line of lines) (line.startsWith('warning') ? process.stderr : process.stdout).write(args.json && !line.startsWith('warning') ? '' : `${line}\n`);
    } catch (error) {
      process.stderr.write(`attnlab: ${error.message}\n`);
      return 1;
    }
  }
  if (args.save) {
    writeFileSync(args.save, saveStateDict(session.trainer, { lab: 'alignment', task: args.task, heads: session.config.heads,
      uniqueKeys: !!args.uniqueKeys, steps: session.step, seed: args.seed }));
    if (!args.json) say(null, `saved the weights to ${args.save}`);
  }
  session.dispose();
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    // Not the user's doing (or not foreseen): one line, exit 1; ATTNLAB_DEBUG=1 adds the stack.
    const message = String(error?.message ?? error).replace(/\s*\n\s*/g, ' ');
    process.stderr.write(`attnlab: ${message}\n`);
    if (process.env.ATTNLAB_DEBUG === '1' && error?.stack) process.stderr.write(`${error.stack}\n`);
    process.exit(1);
  },
);
