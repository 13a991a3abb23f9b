// `attnlab train --lab lookup`: the Lookup lab (course notebook 02) headless. The notebook's
// AttentionTest trains on 7,900 real digits to retrieve the best-matching of 100 database images;
// progress lines, then a final record with what a teacher judges it by: top-1 and top-10 label match
// on 2,000 held-out queries, the retrieval's MSE, and the baselines (chance from the database's own
// label mix, the mean image's MSE, the raw-pixel nearest neighbour).
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { REPO_ROOT } from '../node_loader.mjs';
import { DIGITS_ASSET, loadDigits } from '../data/digits.js';
import { saveStateDict } from '../io/state_dict.js';
import { BackendSteps } from '../training/backend_steps.js';

const DIGITS_FILE = path.join(REPO_ROOT, 'public', DIGITS_ASSET);

/** args: parsed flags; lab: the loaded module; gpu: the WebGPU probe's answer; say(record, text). -> exit code */
export async function trainLookup(args, lab, gpu, say) {
  const defaults = lab.LookupTrainer.defaults();
  const config = { seed: args.seed };
  for (const key of ['heads', 'batch', 'lr']) if (args[key] !== undefined) config[key] = args[key];
  const steps = args.steps ?? defaults.steps;

  let digits, trainer;
  try {
    digits = await loadDigits(lab, await readFile(DIGITS_FILE));
    trainer = new lab.LookupTrainer(config, digits);
  } catch (error) {
    digits?.delete();
    if (error.code === 'ENOENT') throw new Error(`${path.relative(process.cwd(), DIGITS_FILE)} is missing: run bash scripts/build.sh`);
    if (error.name !== 'AttnLabError') throw error;
    process.stderr.write(`attnlab: ${error.message}\n`);
    return 2;
  }
  const c = trainer.config;
  // One attention call a step: the batch's queries (T = batch) against the database (S), in one problem.
  const shape = { B: 1, H: c.heads, T: c.batch, S: c.databaseImages, D: c.embedDim / c.heads };
  const run = new BackendSteps({ lab, trainer, shape, requested: args.backend, gpuAttention: gpu.attention, gpuReason: gpu.reason, gpuSoftware: gpu.software });
  const { backend, reason } = run;
  say({ type: 'start', lab: 'lookup', steps, seed: args.seed, heads: c.heads, batch: c.batch, lr: c.lr, backend, reason,
    build: lab.build, version: lab.version },
  `Attention Lab ${lab.version}: lookup, ${steps} steps, seed ${args.seed}, ${c.heads} head(s), batch ${c.batch}, lr ${c.lr}; `
    + `backend ${backend} (${reason}); database ${c.databaseImages} digits, ${c.heldOutImages} held-out queries, ${c.trainingImages} for training`);

  const t0 = performance.now();
  while (trainer.stepsDone < steps) {
    const n = Math.min(args.every, steps - trainer.stepsDone);
    const { losses, accuracies } = await run.run(n);
    const loss = losses[n - 1], top1 = accuracies[n - 1];
    say({ type: 'progress', step: trainer.stepsDone, epoch: trainer.epoch, loss, top1 },
      `step ${String(trainer.stepsDone).padStart(5)}  epoch ${trainer.epoch}  retrieval MSE ${loss.toFixed(4)}  batch top-1 ${(100 * top1).toFixed(1)}%`);
  }
  const seconds = (performance.now() - t0) / 1000;
  const fallback = run.fallback;
  if (fallback) process.stderr.write(`attnlab: warning: --backend ${args.backend} fell back at step ${fallback.fellBackAt}: ${fallback.reason}\n`);
  const e = trainer.evaluate({ backend: run.cpuBackend });
  const record = {
    type: 'final', lab: 'lookup', steps: trainer.stepsDone, epochs: trainer.epoch, seed: args.seed, heads: c.heads,
    backend: run.backend, reason: run.reason, build: lab.build, stepsPerSecond: trainer.stepsDone / seconds,
    ...(fallback ? { requestedBackend: fallback.requested, fellBackAt: fallback.fellBackAt } : {}),
    queries: e.queries, top1: e.top1, top10: e.top10, mse: e.mse, meanImageMse: e.meanImageMse,
    nearestNeighbourTop1: e.nearestNeighbourTop1, nearestNeighbourMse: e.nearestNeighbourMse, chance: e.chance,
  };
  const pct = (x) => `${(100 * x).toFixed(1)}%`;
  say(record, [
    `on ${e.queries} held-out queries: top-1 label match ${pct(e.top1)} (chance ${pct(e.chance)}, raw-pixel nearest neighbour ${pct(e.nearestNeighbourTop1)}); top-10 precision ${pct(e.top10)}`,
    `retrieval MSE ${e.mse.toFixed(4)} (the database's mean image: ${e.meanImageMse.toFixed(4)}; copying the nearest image: ${e.nearestNeighbourMse.toFixed(4)})`,
    `${record.stepsPerSecond.toFixed(1)} steps/s on ${run.backendLabel}`,
  ].join('\n'));
  if (args.save) {
    await writeFile(args.save, saveStateDict(trainer, { lab: 'lookup', heads: String(c.heads), steps: String(trainer.stepsDone), seed: String(args.seed) }));
    if (!args.json) say(null, `saved the weights to ${args.save}`);
  }
  trainer.delete();
  digits.delete();
  return 0;
}
