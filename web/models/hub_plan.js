// The one plan of a model's download by its Hub id, for both Hub clients (web/cli/hub.mjs: the Hugging
// Face cache on disk; web/models/hub_store.js: the browser's Cache Storage): which file next, and whether
// what came back will do. It does no I/O: hubPlan is a generator of requests, and each client answers them
// with its own transport and storage (drivePlan), so a hostile Hub is refused once, in the same words, by
// both. The kind's files are its registry row's (kind_files.js); the sentences are hub_ids.js's.
//
// Requests, and what a client answers:
//   {size: file}   its size from the Hub's HEAD (or the kept copy's): a number; NaN when the Hub names none;
//                  null when the Hub has no such file (404: EntryNotFound). A refusal (401, gated) is the
//                  client's HubError, thrown from its answer.
//   {plan: files}  [{file, bytes}]: everything the download brings, before the first file after config.json
//   {fetch: file}  true once the file is kept whole; false when the Hub has no such file
//   {text: file}   the kept file's text (config.json, the shard index: small files)
// The plan's result: {kind, files (every file kept, in the order fetched), weights (its weights file),
// shards (the shards' names, [] unless sharded)}.
import { CheckpointError, MAX_WEIGHT_BYTES, SHARD_INDEX, shardNames } from './checkpoint_files.js';
import { chosenAlternative, needWords } from './kind_files.js';
import { MODEL_KINDS, kindForLab, kindOfModelType, labKinds, modelTypeOf, wrongKind } from './registry.js';
import { shardSizeUnknownMessage, shardsTooLargeMessage } from './hub_ids.js';

export class HubError extends CheckpointError {
  constructor(message) {
    super(message);
    this.name = 'HubError';
  }
}

// A shard index's names, its problems said with the id.
function shardsOf(id, indexText) {
  try {
    return shardNames(indexText);
  } catch (error) {
    throw new HubError(`${id}: ${error.message}`);
  }
}

/**
 * The plan (see the top of this file) for id@revision at endpoint, opened in the lab `lab` (its id: the
 * kinds it reads are the rows that name it). checkConfig(kind, config.json's text) -> '' or why the model
 * cannot open (the module's check: the memory it needs), asked before any other file; unreadArchitecture(
 * config.json's text) -> what the core lacks for a model_type it knows and does not read (the module's), or ''.
 */
export function* hubPlan({ id, revision, endpoint, lab, checkConfig = () => '', unreadArchitecture = () => '' }) {
  if (!(yield { fetch: 'config.json' })) throw new HubError(`${id}: no such model on ${endpoint} (config.json not `
    + `found at revision ${revision})`);
  const config = yield { text: 'config.json' };
  let modelType;
  try {
    modelType = JSON.parse(config)?.model_type;
  } catch {
    throw new HubError(`${id}: its config.json is not JSON`);
  }
  const { kind, problem, lab: rightLab } = kindForLab(typeof modelType === 'string' ? modelType : null, lab,
    { what: 'it is', lacks: () => unreadArchitecture(config) });
  if (problem) throw wrongKind(HubError, `${id}: ${problem} (only its config.json was downloaded)`, rightLab);
  // The kind's own check of config.json (the module's: the memory the model needs, model_memory.h),
  // before any other file.
  const why = checkConfig(kind.kind, config);
  if (why) throw new HubError(`${id}: ${why}; nothing of its weights was downloaded`);

  // Which files there are, from a HEAD each, before any but config.json comes: the first alternative of
  // each need that the Hub has whole (config.json is the first need), the optional files it has, the
  // first weights it has.
  const planned = [];
  const fetched = new Set(['config.json']);
  const sized = function* (file) {
    const bytes = yield { size: file };
    if (bytes !== null) planned.push({ file, bytes });
    return bytes !== null;
  };
  for (const need of kind.files.needs) {
    let found = false;
    for (const files of need) {
      const mark = planned.length;
      found = true;
      for (const file of files) if (!(yield* sized(file))) found = false;
      if (found) break;
      planned.length = mark; // a part of an alternative is not fetched
    }
    if (!found) throw new HubError(`${id}: the model has no ${needWords(need)}, which a ${kind.title} `
      + 'checkpoint needs');
  }
  for (const file of kind.files.optional) yield* sized(file);
  let weights = null, shards = [];
  for (const file of kind.files.weights) {
    if (!(yield* sized(file))) continue;
    weights = file;
    if (file === SHARD_INDEX) {
      // A sharded model: the index (a small file) now, then every shard's size, summed against a lab's
      // memory before any shard comes (a shard whose size the Hub does not give cannot be summed).
      if (!(yield { fetch: SHARD_INDEX })) throw new HubError(`${id}: ${SHARD_INDEX} went away while it was fetched`);
      fetched.add(SHARD_INDEX);
      shards = shardsOf(id, yield { text: SHARD_INDEX });
      let total = 0;
      for (const name of shards) {
        const bytes = yield { size: name };
        if (bytes === null) throw new HubError(`${id}: ${SHARD_INDEX} names the shard ${name}, which the Hub does not `
          + `have at revision ${revision}`);
        if (Number.isNaN(bytes)) throw new HubError(shardSizeUnknownMessage(id, name));
        planned.push({ file: name, bytes });
        total += bytes;
      }
      if (total > MAX_WEIGHT_BYTES) throw new HubError(shardsTooLargeMessage(id, shards.length, total));
    }
    break;
  }
  if (!weights) throw new HubError(`${id}: the model has none of ${kind.files.weights.join(', ')} (the weights a `
    + `${kind.title} checkpoint is read from)`);
  yield { plan: planned.map(({ file, bytes }) => ({ file, bytes: Number.isFinite(bytes) ? bytes : 0 })) };

  const files = [];
  for (const { file } of planned) {
    if (!fetched.has(file) && !(yield { fetch: file })) {
      throw new HubError(shards.includes(file) ? `${id}: ${SHARD_INDEX} names the shard ${file}, which the Hub does `
        + `not have at revision ${revision}`
        : `${id}: ${file} went away while it was fetched (the Hub had it a moment before)`);
    }
    files.push(file);
  }
  return { kind, files, weights, shards };
}

/** Runs a plan: each request answered by io[request's verb](file or files), awaited -> the plan's result. */
export async function drivePlan(plan, io) {
  let step = plan.next();
  while (!step.done) {
    const [verb, what] = Object.entries(step.value)[0];
    step = plan.next(await io[verb](what));
  }
  return step.value;
}

/**
 * Whether a model is whole in a client's store, for a lab, with no network -> {kind, files (those there,
 * in the row's order)}, or null. Its kind is config.json's model_type's; a config without one (or with
 * one no kind reads, which the opener then names) is tried as the lab's kinds, then any other. Whole:
 * every need, and the weights (a sharded model's every shard). has(file) -> boolean; text(file) -> a
 * kept file's text. A broken index is not whole.
 */
export async function keptModel(lab, { has, text }) {
  if (!(await has('config.json'))) return null;
  let named = null;
  try {
    named = kindOfModelType(modelTypeOf(await text('config.json')));
  } catch {
    // not JSON: the opener says so
  }
  const mine = labKinds(lab);
  // A kind that needs config.json alone (TransformerLens's, whose config the Induction export's converter
  // writes with its model_type) is known by its model_type only: without one, any folder would look whole.
  const guessed = [...mine, ...MODEL_KINDS.filter((k) => !mine.includes(k))]
    .filter((k) => k.files.needs.some((need) => need.some((files) => files.some((f) => f !== 'config.json'))));
  for (const kind of named ? [named] : guessed) {
    const files = await wholeFiles(kind, has, text);
    if (files) return { kind, files };
  }
  return null;
}

// A kind's files in a store when they make it whole, else null.
async function wholeFiles(kind, has, text) {
  // Which of the kind's files (besides the weights) are there, asked once each; then the opener's rule
  // for a need's alternatives (kind_files.js: chosenAlternative), so a store and a folder agree.
  const there = new Set();
  for (const f of new Set([...kind.files.needs.flat(2), ...kind.files.optional])) if (await has(f)) there.add(f);
  const files = [];
  for (const need of kind.files.needs) {
    const chosen = chosenAlternative(need, (f) => there.has(f));
    if (!chosen) return null;
    files.push(...chosen.filter((f) => !files.includes(f)));
  }
  files.push(...kind.files.optional.filter((f) => there.has(f) && !files.includes(f)));
  const weights = await firstWeights(kind, has, text);
  return weights ? [...files, ...weights] : null;
}

// The first weights the store has whole: [file] or [index, ...shards]; null when none.
async function firstWeights(kind, has, text) {
  for (const file of kind.files.weights) {
    if (!(await has(file))) continue;
    if (file !== SHARD_INDEX) return [file];
    let names;
    try {
      names = shardNames(await text(SHARD_INDEX));
    } catch {
      continue; // a broken index: not whole
    }
    let all = true;
    for (const name of names) all &&= await has(name);
    if (all) return [file, ...names];
  }
  return null;
}
