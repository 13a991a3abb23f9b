// The Web Worker owns the WASM module and the training loop; the page only draws. Its first module is
// web/worker_start.js, which starts the WASM's download and imports this one. It serves any lab
// of the registry: the page names the lab in 'configure' and 'section'.
// Protocol: web/protocol.md.
import { loadAttnLab } from './loader.js';
import { TrainingSession } from './training/session.js';
import { AssetCache } from './training/assets.js';
import { KernelRunner } from './training/kernel_runner.js';
import { WebGpuProbe } from './webgpu/probe.js';
import { readWeightsFile } from './io/weights_file.js';
import { labById } from './labs/registry.js';
import { fileSource } from './io/file_source.js';
import { openFromHub, removeStoredModel, storedModels } from './models/hub_store.js';
import { isRandomWeightsCard, MAX_CARD_CHARACTERS } from './models/model_card.js';

const BATCH_MS = 100; // post progress about this often
const EVALUATE_EVERY = 50; // steps between evaluations on 1,024 fresh samples

let module = null; // the WASM module
let assets = null;
let gpu = { available: false, reason: 'not probed', attention: null, adapter: '' };
let session = null;
let sessionLab = null; // the declaration of the lab the session trains
let targetSteps = 0;
let speed = 0; // steps per second; 0 = as fast as possible
let running = false;
let loopActive = false;
let pending = { losses: [], accuracies: [] };
let rate = { steps: 0, ms: 0 };
let buildRequested = 'auto';
// What each lab opened from the user's files (a lab's `open`, e.g. a pretrained checkpoint): lab id ->
// its state. A failed open keeps the one before.
const opened = new Map();
const OPEN_PROGRESS_MS = 100; // post load progress about this often
// What a fresh module needs to carry on if this one aborts: the lab, its configure request, and the
// weights of the last step the page saw (kept only for models up to RECOVERY_BYTES).
let lastGood = null;
const RECOVERY_BYTES = 64 * 1024 * 1024;

const post = (message, transfer) => self.postMessage(message, transfer ?? []);

/** Whether the folder's model card (README.md) marks it as random test weights (web/models/model_card.js). */
async function markedRandom(sources) {
  const card = sources.find((s) => s.name.toLowerCase() === 'readme.md');
  if (!card) return false;
  const bytes = await card.read(0, Math.min(card.size, MAX_CARD_CHARACTERS)).catch(() => null);
  return !!bytes && isRandomWeightsCard(new TextDecoder().decode(bytes));
}

// A lab's data files: inline in the single file (scripts/build_single_file.mjs), else fetched from the
// site next to the page (public/assets/, two folders above this file in public/build/web/).
async function readAsset(file) {
  const inline = globalThis.ATTNLAB_INLINE?.assets?.[file];
  if (inline) return inline();
  const response = await fetch(new URL(`../../${file}`, import.meta.url));
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

// The pool: this thread and one pthread per other core, at most 7 (core/shard_runner.h). A training
// step uses two of them (its batch splits into two shards: core/trainers/sharded_step.h, kShards = 2,
// which keeps every seed's bits); the checkpoint models' Linear products use all of them, with the same
// bits for any count (core/layers/packed_linear.h). docs/benchmarks.md has the measurements.

/** Sizes the threads module's pool to the machine; -> the threads a step runs on (1 in other builds). */
function sizeThreadPool(mod) {
  if (mod.build !== 'simd-threads') return 1;
  const threads = Math.max(1, Math.min(navigator.hardwareConcurrency || 1, mod.workerThreads.available + 1));
  mod.setWorkerThreads(threads - 1);
  return threads;
}

// noThreads: the page's reason why this page cannot run threads (web/site/site_worker.js), if any.
async function init({ build = 'auto', webgpu = true, noThreads = null }) {
  buildRequested = build;
  module = await loadAttnLab({ build });
  const threads = sizeThreadPool(module);
  assets = new AssetCache(module, readAsset);
  gpu = webgpu ? await WebGpuProbe.probe(globalThis.navigator?.gpu) : { available: false, reason: 'disabled',
    attention: null, adapter: '' };
  post({
    type: 'ready', version: module.version, build: module.build, buildNote: module.buildNote,
    threads: { count: threads, reason: module.build === 'simd-threads' ? null : noThreads ?? module.buildNote },
    cpuBackends: module.cpuBackends, webgpu: { available: gpu.available, reason: gpu.reason, adapter: gpu.adapter },
  });
}

function labOf(id) {
  const lab = labById(id);
  if (!lab) throw new Error(`unknown lab '${id}'`);
  return lab;
}

async function newSession(lab, config, backend) {
  return TrainingSession.create({
    module, lab, config, assets: await assets.forLab(lab), request: { requested: backend, gpu },
  });
}

async function configure({ lab: id, config, backend = 'auto', steps }) {
  const lab = labOf(id);
  adopt(lab, await newSession(lab, config, backend), { steps });
  lastGood = { lab, config, backend, steps, tensors: null, step: 0 };
}

/** Keeps the weights a fresh module would restore (at evaluations and pauses: not every chunk). */
function rememberWeights() {
  if (!session || !lastGood) return;
  const tensors = session.stateDict();
  let bytes = 0;
  for (const t of Object.values(tensors)) bytes += t.data.byteLength;
  if (bytes <= RECOVERY_BYTES) Object.assign(lastGood, { tensors, step: session.step });
}

// Emscripten's abort() (an allocation that failed, an assertion in the core) throws a
// WebAssembly.RuntimeError, and so do a trap and an out-of-bounds access: after any of these the module
// may not be used again.
const isAbort = (error) => error instanceof WebAssembly.RuntimeError || /^Aborted\(/.test(String(error?.message));

/**
 * The module aborted: start a fresh one, rebuild the last model and put back its last saved weights,
 * and say so. The page keeps working; the tab needs no reload.
 */
async function recover(error) {
  const what = String(error?.message ?? error).split('\n')[0];
  running = false;
  session = null; // the old one lives in the dead module: never touch it again
  opened.clear(); // so do the opened checkpoints: the page asks for them again
  module = await loadAttnLab({ build: buildRequested });
  sizeThreadPool(module);
  assets = new AssetCache(module, readAsset);
  if (!lastGood) {
    post({ type: 'error', request: 'recover', message: `the training module stopped (${what}) and was restarted; build `
      + 'a model to go on' });
    return;
  }
  const { lab, config, backend, steps, tensors, step } = lastGood;
  const next = await newSession(lab, config, backend);
  if (tensors) next.loadStateDict(tensors);
  adopt(lab, next, { steps }, { recovered: { reason: what, step: tensors ? step : 0 } });
}

// A session from the config, with the file's weights loaded into it. A file that does not fit throws
// (StateDictError: every missing, unexpected and mis-shaped tensor), and the current session stays.
async function sessionFromFile(lab, config, backend, bytes, name) {
  const { tensors } = readWeightsFile(module, bytes, name);
  const next = await newSession(lab, config, backend);
  try {
    next.loadStateDict(tensors);
  } catch (error) {
    next.dispose();
    throw error;
  }
  return next;
}

async function importWeights({ lab: id, config, backend = 'auto', steps, bytes, name }) {
  const lab = labOf(id);
  const next = await sessionFromFile(lab, config, backend, bytes, name);
  next.weightsFile = name; // the sections that name the model say which file it came from
  adopt(lab, next, { steps }, { imported: true });
  lastGood = { lab, config, backend, steps, tensors: null, step: 0 };
  rememberWeights();
}

/**
 * A student's model beside the run (issue 28: panels/compare.js): built from its file once, asked the
 * run's fixed sample (or, where its settings make that sample not fit, its own) and evaluated on fresh
 * held-out data, then dropped. The run and its session are not touched. A file that does not fit throws
 * as an import does.
 */
async function compareWeights({ lab: id, config, bytes, name }) {
  const lab = labOf(id);
  if (sessionLab !== lab) throw new Error(`build the ${lab.title} lab's model first`);
  const theirs = await sessionFromFile(lab, config, 'auto', bytes, name);
  try {
    let sample = session.fixedSample(), ownSample = false, snapshot;
    try {
      snapshot = { step: 0, ...theirs.inspect(lab.trainer.sampleArgs(theirs.config, sample)) };
    } catch {
      // Loading took a snapshot of its own fixed sample already (TrainingSession.loadStateDict).
      sample = theirs.fixedSample();
      ownSample = true;
      snapshot = theirs.lastSnapshot;
    }
    post({ type: 'compared', config: theirs.config, sample, ownSample, snapshot, evaluation: theirs.evaluate() });
  } finally {
    theirs.dispose();
  }
}

/** Makes `next` the session (dropping the old one) and tells the page: `configured`. */
function adopt(lab, next, { steps }, extra = {}) {
  session?.dispose();
  session = next;
  sessionLab = lab;
  running = false;
  targetSteps = steps ?? session.defaultSteps;
  pending = { losses: [], accuracies: [] };
  session.drainSnapshots(); // the first snapshot goes with 'configured'
  rate = { steps: 0, ms: 0 };
  post({
    type: 'configured', lab: lab.id, config: session.config, choice: session.choice, steps: targetSteps,
    fixedSample: session.fixedSample(), snapshot: session.lastSnapshot, ...extra,
  });
}

function flushProgress(extra = {}) {
  const snapshots = session.drainSnapshots();
  const losses = Float32Array.from(pending.losses), accuracies = Float32Array.from(pending.accuracies);
  pending.losses = [];
  pending.accuracies = [];
  post({
    type: 'progress', step: session.step, losses, accuracies, snapshots, choice: session.choice,
    running, targetSteps, stepsPerSecond: rate.ms > 0 ? (1000 * rate.steps) / rate.ms : 0, ...extra,
  }, [losses.buffer, accuracies.buffer]);
}

/** A snapshot at the current step unless there is one (an inspection only: no draw of the training's RNG). */
function snapshotNow() {
  if (session.lastSnapshot?.step !== session.step) session.takeSnapshot();
}

async function trainSteps(n) {
  const t0 = performance.now();
  const before = session.step;
  const { losses, accuracies } = await session.runStepsWithSnapshots(n);
  rate.steps += n;
  rate.ms += performance.now() - t0;
  pending.losses.push(...losses);
  pending.accuracies.push(...accuracies);
  // An evaluation each time a multiple of EVALUATE_EVERY is crossed.
  if (Math.floor(session.step / EVALUATE_EVERY) > Math.floor(before / EVALUATE_EVERY)) return session.evaluate();
  return null;
}

const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));

async function loop() {
  if (loopActive) return;
  loopActive = true;
  try {
    while (running && session && session.step < targetSteps) {
      const batchStart = performance.now();
      const stepBefore = session.step;
      let evaluation = null;
      // Steps in chunks sized from the measured rate, until about BATCH_MS have passed.
      while (running && session.step < targetSteps && performance.now() - batchStart < BATCH_MS) {
        // Until a step has been timed, one step: a guess (it was 10 ms) made the first chunk of a big
        // model 10 steps long, and Pause waited for all of them (56 s in one report).
        const msPerStep = rate.steps ? rate.ms / rate.steps : Infinity;
        let chunk = Math.max(1, Math.floor((BATCH_MS - (performance.now() - batchStart)) / msPerStep));
        if (speed > 0) chunk = Math.max(1, Math.round((speed * BATCH_MS) / 1000));
        chunk = Math.min(chunk, targetSteps - session.step);
        evaluation = (await trainSteps(chunk)) ?? evaluation;
        if (speed > 0) break;
      }
      if (session.step >= targetSteps) {
        running = false;
        evaluation = session.evaluate();
      }
      // Stopped (paused, or done) between two snapshots: one at this step, so the figures show the step
      // the status says (issue 45: paused at 62, the figures said 60).
      if (!running) snapshotNow();
      flushProgress(evaluation ? { evaluation } : {});
      if (evaluation || !running) rememberWeights();
      const stepsThisBatch = session.step - stepBefore;
      const spent = performance.now() - batchStart;
      // A paced batch lasts as long as its steps should take at `speed`: one step at 1 step/s waits a
      // second (waiting only BATCH_MS would run 1 and 5 steps/s at 10 steps/s).
      const batchMs = speed > 0 ? (1000 * stepsThisBatch) / speed : 0;
      await (speed > 0 ? new Promise((r) => setTimeout(r, Math.max(0, batchMs - spent))) : nextTask());
    }
  } catch (error) {
    // A failure that is not a lost device (those fall back inside the session): training stops and
    // the page shows the error; the run so far is kept. An aborted module is replaced (recover).
    if (isAbort(error)) {
      queue = queue.then(() => recover(error)).catch((again) => post({ type: 'error', request: 'recover',
        message: `the training module stopped (${error.message}) and could not be restarted: ${again.message}` }));
    }
    else post({ type: 'error', message: `training stopped at step ${session?.step ?? 0}: ${error?.message ?? error}`,
      request: 'play' });
  } finally {
    loopActive = false;
    running = false;
    // A pause that came while the loop waited between batches: the figures catch up with the step here,
    // where no step is in flight.
    if (session && session.lastSnapshot && session.lastSnapshot.step !== session.step) {
      try {
        snapshotNow();
        flushProgress();
      } catch { /* an aborted module: recover() above rebuilds it */ }
    }
    post({ type: 'state', running: false, step: session?.step ?? 0 });
  }
}

const handlers = {
  init,
  configure,
  import: importWeights,
  compare: compareWeights,
  play() {
    if (session.step >= targetSteps) targetSteps = session.step + session.defaultSteps;
    running = true;
    post({ type: 'state', running: true, step: session.step });
    loop();
  },
  pause() {
    running = false;
    rememberWeights();
    post({ type: 'state', running: false, step: session.step });
  },
  async step({ count = 1 }) {
    running = false;
    const evaluation = await trainSteps(Math.max(1, Math.min(count, 1000)));
    snapshotNow();
    flushProgress({ evaluation: evaluation ?? session.evaluate() });
  },
  set({ lr, speed: newSpeed, steps }) {
    if (newSpeed !== undefined) speed = Math.max(0, Number(newSpeed) || 0);
    if (!session) return; // the page follows a configure with its speed and lr: a refused one leaves none
    if (lr !== undefined) session.setLearningRate(lr);
    if (steps !== undefined) targetSteps = steps;
    post({ type: 'state', running, step: session.step, config: session.config });
  },
  inspect({ sample }) {
    post({ type: 'inspection', sample, result: session.inspect(sample) });
  },
  evaluate() {
    flushProgress({ evaluation: session.evaluate() });
  },
  export() {
    post({ type: 'weights', tensors: session.stateDict(), config: session.config, step: session.step });
  },
  // Files the user chose for a lab that opens them (lab.open): read in the worker, never on the page.
  async open({ lab: id, files, name, request }) {
    const lab = labOf(id);
    if (!lab.open) throw new Error(`the ${lab.title} lab opens no files`);
    let last = 0;
    const onProgress = ({ bytes, total, tensor }) => {
      const now = performance.now();
      if (now - last < OPEN_PROGRESS_MS && bytes < total) return;
      last = now;
      post({ type: 'open-progress', lab: lab.id, request, bytes, total, tensor });
    };
    post({ type: 'open-progress', lab: lab.id, request, bytes: 0, total: 0, tensor: '' });
    const sources = [...files].map(fileSource);
    const { state, summary } = await lab.open.load(module, sources, { onProgress, name });
    lab.open.dispose?.(opened.get(lab.id));
    opened.set(lab.id, state);
    // WebAssembly memory never shrinks: its size now is the peak the load needed (shown on the page).
    post({ type: 'opened', lab: lab.id, request,
      summary: { ...summary, heapBytes: module._module.HEAPU8.buffer.byteLength,
        randomWeights: await markedRandom(sources) } });
  },
  // A model by its Hub id (lab.open): its files fetched into the browser's Cache Storage (or found there,
  // with no network), then read as the user's own files are. cancelOpen (answered at once, outside the
  // queue) stops the download; nothing of it is kept. A download that breaks off keeps the weights'
  // whole parts, and the next openHub of that model goes on from them.
  async openHub({ lab: id, model, revision, endpoint, token, request, partBytes, stallSeconds }) {
    const lab = labOf(id);
    if (!lab.open) throw new Error(`the ${lab.title} lab opens no files`);
    hubDownload?.abort();
    const controller = new AbortController();
    hubDownload = controller;
    let last = 0;
    let planned = 0; // the bytes the download will be, once the Hub has said
    const progress = (fields) => {
      const now = performance.now();
      if (now - last < OPEN_PROGRESS_MS && fields.bytes < fields.total) return;
      last = now;
      post({ type: 'open-progress', lab: lab.id, request, ...fields });
    };
    post({ type: 'open-progress', lab: lab.id, request, bytes: 0, total: 0, tensor: '' });
    try {
      // partBytes: the size of the weights' Range requests; stallSeconds: how long a part may bring
      // almost nothing before it is asked for again (hub_store.js; a test makes both small).
      const parts = { ...(Number.isInteger(partBytes) && partBytes >= 1024 ? { partBytes } : {}),
        ...(Number.isFinite(stallSeconds) && stallSeconds > 0 ? { stallSeconds } : {}) };
      // checkConfig: the module's memory rule on config.json, before any weights come (model_memory.h).
      const { sources, fromCache } = await openFromHub({ id: model, revision, endpoint, token, lab: lab.id,
        signal: controller.signal, ...parts, checkConfig: (kind, config) => module.checkConfig(kind, config),
        unreadArchitecture: (config) => module.unreadArchitecture(config),
        onProgress: ({ file, bytes, total }) => progress({ bytes, total, tensor: '', downloading: file, planned }),
        onPlan: (plan) => {
          planned = plan.bytes;
          post({ type: 'open-progress', lab: lab.id, request, bytes: 0, total: 0, tensor: '',
            downloading: plan.files[0]?.file ?? '', planned, plan: plan.files });
        } });
      const { state, summary } = await lab.open.load(module, sources,
        { onProgress: ({ bytes, total, tensor }) => progress({ bytes, total, tensor }), name: model });
      lab.open.dispose?.(opened.get(lab.id));
      opened.set(lab.id, state);
      post({ type: 'opened', lab: lab.id, request,
        summary: { ...summary, hub: { id: model, revision, fromCache },
          heapBytes: module._module.HEAPU8.buffer.byteLength } });
    } finally {
      if (hubDownload === controller) hubDownload = null;
      post({ type: 'hub-stored', models: await storedModels().catch(() => []) });
    }
  },
  // A section of a lab that computes outside training (web/labs/*: sections): with the values of its
  // properties, on the backend the page asks for; the session's model where the section needs one.
  async section({ lab: id, section: sectionId, values, input, backend = 'auto', request }) {
    const lab = labOf(id);
    const section = lab.sections?.find((s) => s.id === sectionId);
    if (!section) throw new Error(`the ${lab.title} lab has no section '${sectionId}'`);
    if (section.needsModel && (!session || sessionLab !== lab)) throw new Error('this section needs a model: wait '
      + 'for it to be built');
    if (section.needsOpen && !opened.has(lab.id)) throw new Error(`${lab.open?.title ?? 'Open the files'} first.`);
    const kernel = new KernelRunner({ module, request: { requested: backend, gpu } });
    const ctx = {
      module,
      backend, // the backend asked for: the kernel below runs it (or says why it fell back)
      session: sessionLab === lab ? session : null,
      attention: (args) => kernel.forward(args),
      rng: (seed) => new module.Rng(seed),
      opened: opened.get(lab.id) ?? null,
    };
    const result = await section.compute(ctx, values, input);
    post({ type: 'section', lab: lab.id, section: section.id, request, result });
  },
  loseDevice() {
    gpu.attention?.destroy();
  },
  // Tests only (tests/browser/module_abort.test.mjs): a real failed allocation, as a bug in the core
  // would make one. A Linear of 30,000 x 30,000 (3.6 GB of weights, past the module's 2 GB) is built on
  // the raw class, past the size check of the binding edge (_config_error: at most 4,096) that the JS
  // Linear always asks first; the allocation fails and the module aborts. The module has no test-only
  // entry for it.
  abortModule() {
    new module._module._RawLinear(30000, 30000, 0, true);
  },
};

async function handle(data) {
  try {
    const handler = handlers[data?.type];
    if (!handler) throw new Error(`unknown request '${data?.type}'`);
    if (data.type !== 'init' && !module) throw new Error('the module is still loading');
    if (!['init', 'configure', 'import', 'set', 'section',
      'open', 'openHub'].includes(data.type) && !session) throw new Error('configure a lab first');
    await handler(data);
  } catch (error) {
    if (isAbort(error) && data?.type !== 'init') {
      try {
        await recover(error);
      } catch (again) {
        post({ type: 'error', request: 'recover', message: `the training module stopped (${error.message}) and could `
          + `not be restarted: ${again.message}` });
      }
      return;
    }
    // openIn: a checkpoint of another lab's kind (web/models/registry.js), for the page's link to that lab.
    post({ type: 'error', message: error?.message ?? String(error), request: data?.type, section: data?.section,
      lab: data?.lab, ...(error?.lab ? { openIn: { id: error.lab.id, title: error.lab.title } } : {}) });
  }
}

// Requests are handled one after another, in the order sent: a configure that waits for a lab's data
// file finishes before the play that follows it. (The training loop itself is not a request: a pause
// arrives between its chunks.)
// Requests that touch neither the module nor the session, answered at once even while a long request
// (a download) holds the queue: stopping a download, and the list of stored models.
let hubDownload = null;
const IMMEDIATE = {
  // A weights file's tensor names, shapes and dtypes and its metadata (no values), for the page to
  // derive the model it fits before importing it: a .pt needs the module's reader (weights_file.js).
  peekWeights({ bytes, name, request }) {
    try {
      const { tensors, metadata } = readWeightsFile(module, bytes, name);
      const shapes = Object.fromEntries(Object.entries(tensors).map(([k, t]) => [k,
        { dtype: t.dtype, shape: t.shape }]));
      post({ type: 'weights-peeked', request, tensors: shapes, metadata });
    } catch (error) {
      post({ type: 'weights-peeked', request, error: error.message });
    }
  },
  cancelOpen() {
    hubDownload?.abort();
  },
  async hubStored() {
    post({ type: 'hub-stored', models: await storedModels() });
  },
  async hubRemove({ model, revision, endpoint }) {
    await removeStoredModel({ id: model, revision, endpoint });
    post({ type: 'hub-stored', models: await storedModels() });
  },
};

let queue = Promise.resolve();
self.onmessage = ({ data }) => {
  if (Object.hasOwn(IMMEDIATE, data?.type)) {
    Promise.resolve(IMMEDIATE[data.type](data)).catch((error) => post({ type: 'error', request: data.type,
      message: String(error?.message ?? error) }));
    return;
  }
  queue = queue.then(() => handle(data));
};
