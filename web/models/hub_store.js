// Models opened by their Hub id on the page, kept in the browser's Cache Storage so that they open again
// with no network (on a train, in a classroom whose Wi-Fi drops). Runs in the worker; no DOM.
//
//   openFromHub({id, revision, endpoint, token, expect, signal, onProgress, onPlan, checkConfig}) -> {sources, kind, fromCache}
//     (onPlan: the files still to download and their sizes, before the first of them; checkConfig(kind,
//     config.json's text) -> '' or why the model cannot open, asked before any other file: the module's)
//     The kind's files (web/models/registry.js: config.json first; its model_type says the kind; then the
//     tokenizer files and the weights, model.safetensors before pytorch_model.bin, as from_pretrained
//     prefers them), each fetched from {endpoint}/{id}/resolve/{revision}/{file} with redirects followed
//     and streamed into the cache (never whole in memory), then read back as disk-backed Blobs in slices
//     like a file the user chose. A token goes as "Authorization: Bearer" and is never stored.
//   storedModels() -> [{id, revision, endpoint, files, bytes}]; removeStoredModel(id, revision, endpoint).
//
// A small file comes in one request. The weights come in HTTP Range requests of PART_BYTES, each kept
// in the cache as it arrives, so a download that breaks off on a school network goes on from the last
// whole part when the model is opened again; once every part is there they become the file's one entry
// (a Blob of the parts: no copy through memory). A server that answers a Range with the whole file (200)
// is read as the whole file. Nothing incomplete ever looks like a file: Cache Storage's put() keeps an
// entry only once its whole body has arrived, a body shorter than it should be is removed, and Cancel
// removes the parts too.
//
// A part that stalls (fewer than STALL_BYTES in STALL_SECONDS: hub_ids.js) is asked for again, up to
// PART_TRIES times; then the download stops with its whole parts kept, and the list of kept models says
// "stalled" until it is opened again. A renamed repository (the Hub's relative 307 to the new name) is
// followed by fetch itself, and the model is kept under the id typed. A small file is capped at its
// opener's limit while it arrives, and a weights file announced larger than a lab holds is refused
// before its body (checkpoint_files.js: smallFileLimit, MAX_WEIGHT_BYTES).
import { CheckpointError, MAX_WEIGHT_BYTES, SHARD_INDEX, shardNames } from './checkpoint_files.js';
import { STALL_BYTES, STALL_SECONDS, announcedSize, authorization, contentRange, fileLimit, hubFileUrl, hubRefusal, isRedirectLoop, isWeightsFile, shardSizeUnknownMessage, shardsTooLargeMessage,
  stallWatch, tooLargeMessage } from './hub_ids.js';
import { MODEL_KINDS } from './registry.js';

const CACHE = 'attnlab-hub-v1';
const ORIGIN_HEADER = 'x-attnlab-hub-file';
const PART_HEADER = 'x-attnlab-hub-part'; // a part of a file still downloading: {endpoint, id, revision, file, part}
export const PART_BYTES = 16 * 1024 * 1024;
/** How many times a stalled part is asked for before the download stops (its whole parts kept). */
export const PART_TRIES = 3;
const STALLED_PART = 'stalled'; // the part "number" of the marker a stalled download leaves

const tooLarge = (id, file, bytes, arrived = false) => new HubError(tooLargeMessage(id, file, bytes, { arrived }));

export class HubError extends CheckpointError {
  constructor(message) {
    super(message);
    this.name = 'HubError';
  }
}

/** A cached file's Blob as a source (the shape every opener reads). */
const blobSource = (name, blob) => ({
  name,
  size: blob.size,
  async read(offset, length) {
    return new Uint8Array(await blob.slice(offset, offset + length).arrayBuffer());
  },
  text: () => blob.text(),
});

const mb = (n) => `${(n / 1e6).toFixed(n < 1e6 ? 2 : n < 1e7 ? 1 : 0)} MB`;

async function openCache(caches) {
  if (!caches) throw new HubError('this browser keeps no files for pages (no Cache Storage): open the checkpoint\'s folder instead');
  return caches.open(CACHE);
}

/**
 * The files of `kind` found in the cache for id@revision at endpoint -> Map(file -> Blob); with a
 * sharded checkpoint's index, the shards it names too (found.shards: their names; null when the index is
 * not there, [] when it is broken).
 */
async function cachedFiles(cache, endpoint, id, revision, files) {
  const found = new Map();
  const match = async (file) => {
    const response = await cache.match(hubFileUrl(endpoint, id, revision, file));
    if (response) found.set(file, await response.blob());
  };
  for (const file of files) await match(file);
  found.shards = null;
  if (found.has(SHARD_INDEX)) {
    try {
      found.shards = shardNames(await found.get(SHARD_INDEX).text());
    } catch {
      found.shards = [];
    }
    for (const shard of found.shards) await match(shard);
  }
  return found;
}

// The first weights file there is; the index counts only with every shard it names.
const weightsFound = (kind, found) => kind.files.weights.find((f) => found.has(f) && (f !== SHARD_INDEX || (found.shards.length && found.shards.every((s) => found.has(s)))));
const complete = (kind, found) => kind.files.required.every((f) => found.has(f)) && !!weightsFound(kind, found);
const kindFiles = (kind) => [...kind.files.required, ...kind.files.optional, ...kind.files.weights];

/** Sources for the opener: the required and optional files there are, and the first weights file there is (an index with its shards). */
function sourcesOf(kind, found) {
  const weights = weightsFound(kind, found);
  const shards = weights === SHARD_INDEX ? found.shards : [];
  return [...kind.files.required, ...kind.files.optional, weights, ...shards].filter((f) => found.has(f)).map((f) => blobSource(f, found.get(f)));
}

/**
 * Fetches one file into the cache -> true, or false when the Hub has no such file (404).
 * onProgress({file, bytes, total}) as it arrives.
 */
async function download({ cache, endpoint, id, revision, file, token, signal, onProgress, fetch, announced = 0, ranged = false, partBytes = PART_BYTES,
  stallSeconds = STALL_SECONDS }) {
  if (announced > fileLimit(file)) throw tooLarge(id, file, announced);
  if (ranged && announced > 0) return downloadInParts({ cache, endpoint, id, revision, file, token, signal, onProgress, fetch, size: announced, partBytes, stallSeconds });
  const url = hubFileUrl(endpoint, id, revision, file);
  const response = await request({ fetch, url, headers: authorization(token), signal, id, file, endpoint });
  if (!response.ok) return refused({ response, id, endpoint, revision, file, token });
  if (!response.body) throw new HubError(`${id}: the Hub answered HTTP ${response.status} for ${file} with no body`);
  const total = Number(response.headers.get('content-length')) || 0;
  // The size announced before the download (a HEAD) and the one that comes differ: the file changed
  // between the two requests (a new commit on the branch).
  if (announced && total && announced !== total) {
    await response.body.cancel();
    throw new HubError(`${id}: ${file} changed size between two requests (${announced} bytes, then ${total}): the model was updated while it downloaded; nothing of it was kept: open it again`);
  }
  if (total > fileLimit(file)) {
    await response.body.cancel();
    throw tooLarge(id, file, total);
  }
  await storeWhole({ cache, endpoint, id, revision, file, signal, onProgress, response, total });
  return true;
}

// A file's whole body into the cache as the file's entry (what storedModels() lists it as).
const wholeTag = (endpoint, id, revision, file) => ({ [ORIGIN_HEADER]: JSON.stringify({ endpoint, id, revision, file }) });
const storeWhole = ({ cache, endpoint, id, revision, file, signal, onProgress, response, total }) => storeBody({
  cache, key: hubFileUrl(endpoint, id, revision, file), response, headers: wholeTag(endpoint, id, revision, file), expected: total,
  most: fileLimit(file), onBytes: (bytes) => onProgress({ file, bytes, total }),
  failure: (what) => (what.tooMuch ? tooLarge(id, file, fileLimit(file), true) : failure(id, file, signal, what, 'nothing of it was kept')) });

// A download that went wrong, as a sentence: cancelled, storage full, broken off, or short.
function failure(id, file, signal, { error, bytes, total }, kept, next = 'open it again') {
  if (signal?.aborted) return new HubError(`cancelled: ${id} was not opened and nothing of ${file} was kept`);
  if (error?.name === 'QuotaExceededError') {
    return new HubError(`not enough storage for ${id}'s ${file}${total ? ` (${mb(total)})` : ''}: remove a stored model below, or free space in the browser`);
  }
  if (error) return new HubError(`${id}: the download of ${file} broke off after ${mb(bytes)} (${error?.message ?? error}); ${kept}: ${next}`);
  return new HubError(`${id}: the download of ${file} is not whole (${bytes} of ${total} bytes); ${kept}: ${next}`);
}

// A response's body into the cache under `key`, counted as it streams; an entry that is not whole
// (broken off, or shorter than `expected`) is removed and failure({error, bytes, total, tooMuch}) thrown.
// A body that passes `most` bytes (a compressed answer that inflates, or not the file) is stopped there.
async function storeBody({ cache, key, response, headers, expected, most = Infinity, onBytes, failure: fail }) {
  let bytes = 0, tooMuch = false;
  const counted = response.body.pipeThrough(new TransformStream({
    transform(chunk, controller) {
      bytes += chunk.byteLength;
      if (bytes > most) {
        tooMuch = true;
        controller.error(new Error(`more than ${most} bytes`));
        return;
      }
      onBytes(bytes);
      controller.enqueue(chunk);
    },
  }));
  try {
    await cache.put(key, new Response(counted, { headers: { 'content-type': 'application/octet-stream', ...headers } }));
  } catch (error) {
    await cache.delete(key);
    throw fail({ error, bytes, total: expected, tooMuch });
  }
  if (expected && bytes !== expected) {
    await cache.delete(key);
    throw fail({ error: null, bytes, total: expected });
  }
  return bytes;
}

const partKey = (url, i) => `${url}?attnlab-part=${i}`;

/**
 * The weights in Range requests of partBytes (see the top of this file) -> true; false when the Hub has
 * no such file. size: the file's size, from the HEAD before the download.
 */
async function downloadInParts({ cache, endpoint, id, revision, file, token, signal, onProgress, fetch, size, partBytes, stallSeconds }) {
  const url = hubFileUrl(endpoint, id, revision, file);
  const count = Math.ceil(size / partBytes);
  const tag = (part) => ({ [PART_HEADER]: JSON.stringify({ endpoint, id, revision, file, part }) });
  let done = 0;
  for (let i = 0; i < count; i++) {
    const begin = i * partBytes, end = Math.min(size, begin + partBytes);
    const kept = await cache.match(partKey(url, i)); // kept from a download that broke off
    if (kept && (await kept.blob()).size === end - begin) {
      done += end - begin;
      continue;
    }
    if (kept) await cache.delete(partKey(url, i)); // cut at another part size: not this part
    for (let tries = 1; ; tries++) {
      const watch = stallWatch(stallSeconds, signal);
      try {
        const whole = await downloadPart({ cache, url, id, revision, endpoint, file, token, signal: watch.signal, outer: signal, onProgress, fetch, size, begin, end, done,
          tag: tag(i), key: partKey(url, i), progress: watch.progress });
        if (whole) return true;
        break;
      } catch (error) {
        if (!watch.stalled) throw error;
        if (tries >= PART_TRIES) {
          // Marked for the list of kept models ("stalled"); the whole parts stay for the next open.
          await cache.put(partKey(url, STALLED_PART), new Response('', { headers: tag(STALLED_PART) }));
          throw new HubError(`${id}: the download of ${file} stalled: less than ${STALL_BYTES} bytes arrived in ${stallSeconds} s, ${PART_TRIES} times; `
            + `${mb(done)} that arrived whole are kept: open it again to go on from there`);
        }
      } finally {
        watch.stop();
      }
    }
    done += end - begin;
  }
  const parts = [];
  for (let i = 0; i < count; i++) parts.push(await (await cache.match(partKey(url, i))).blob());
  try {
    await cache.put(url, new Response(new Blob(parts), { headers: { 'content-type': 'application/octet-stream', ...wholeTag(endpoint, id, revision, file) } }));
  } catch (error) {
    await cache.delete(url);
    throw failure(id, file, signal, { error, bytes: size, total: size }, 'its parts are kept');
  }
  await removeParts(cache, url);
  return true;
}

/**
 * Bytes begin..end-1 of the weights into the cache as one part -> false; or true when the server sent
 * the whole file instead (then kept as the file). progress(bytes of this part) feeds the stall watch.
 */
async function downloadPart({ cache, url, id, revision, endpoint, file, token, signal, outer, onProgress, fetch, size, begin, end, done, tag, key, progress }) {
  const headers = { range: `bytes=${begin}-${end - 1}`, ...authorization(token) };
  const response = await request({ fetch, url, headers, signal, outer, id, file, endpoint });
  if (response.status === 200) {
    // The server ignored the Range and sends the whole file: take it as the whole file.
    await removeParts(cache, url);
    await storeWhole({ cache, endpoint, id, revision, file, signal, onProgress, response, total: size });
    return true;
  }
  if (!response.ok) return refused({ response, id, endpoint, revision, file, token });
  const range = contentRange(response);
  if (range && Number.isFinite(range.size) && range.size !== size) {
    // The file changed between the HEAD and now (a new commit on the branch): its parts do not fit.
    await response.body?.cancel();
    await removeParts(cache, url);
    throw new HubError(`${id}: ${file} changed size between two requests (${size} bytes, then ${range.size}): the model was updated while it downloaded; nothing of it was kept: open it again`);
  }
  if (response.status !== 206 || (range && range.first !== begin)) {
    await response.body?.cancel();
    throw new HubError(`${id}: the Hub answered bytes ${begin}-${end - 1} of ${file} with something else (HTTP ${response.status}${response.headers.get('content-range') ? `, ${response.headers.get('content-range')}` : ''})`);
  }
  await storeBody({ cache, key, response, headers: tag, expected: end - begin, most: end - begin,
    onBytes: (bytes) => {
      progress(bytes);
      onProgress({ file, bytes: done + bytes, total: size });
    },
    failure: (what) => (signal.aborted && !outer?.aborted ? signal.reason
      : failure(id, file, outer, { ...what, bytes: done + what.bytes, total: size }, 'the parts that arrived whole are kept', 'open it again to go on from them')) });
  return false;
}

async function removeParts(cache, url) {
  for (const request of await cache.keys()) if (request.url.startsWith(`${url}?attnlab-part=`)) await cache.delete(request);
}

// outer: the caller's own signal (Cancel), where `signal` also carries a stall watch's abort.
async function request({ fetch, url, headers, signal, outer = signal, id, file, endpoint }) {
  try {
    return await fetch(url, { headers, signal, redirect: 'follow' });
  } catch (error) {
    if (signal?.aborted && !outer?.aborted) throw signal.reason; // a stall: the caller tries again
    if (outer?.aborted) throw new HubError(`cancelled: ${id} was not opened and nothing of ${file} was kept`);
    if (isRedirectLoop(error)) throw new HubError(`${id}: ${file} redirects in a loop at ${endpoint}: is it a Hugging Face endpoint (Hub settings)?`);
    throw new HubError(`cannot reach ${endpoint} for ${id} (${error.message}): a model opens offline only once it has been opened here with the network`);
  }
}

// A refused answer: the Hub's sentence, or false for a file it does not have.
async function refused({ response, id, endpoint, revision, file, token }) {
  const why = hubRefusal({ id, endpoint, revision, file, status: response.status, errorCode: response.headers.get('x-error-code'), token, tokenWhere: 'the Token field' });
  await response.body?.cancel();
  if (why) throw new HubError(why);
  return false;
}

/**
 * id, revision, endpoint (canonical), token (or null), expect (the lab's kind), signal, onProgress ->
 * {sources, kind, fromCache}. Throws a HubError naming the id, the file and what to do.
 */
export async function openFromHub({ id, revision = 'main', endpoint, token = null, expect, signal, onProgress = () => {}, onPlan = () => {},
  caches = globalThis.caches, fetch = globalThis.fetch.bind(globalThis), partBytes = PART_BYTES, stallSeconds = STALL_SECONDS, checkConfig = () => '' }) {
  const cache = await openCache(caches);
  const expected = MODEL_KINDS.find((k) => k.kind === expect);
  // Complete in the cache: no network at all.
  for (const kind of [expected, ...MODEL_KINDS.filter((k) => k !== expected)]) {
    const found = await cachedFiles(cache, endpoint, id, revision, kindFiles(kind));
    if (complete(kind, found)) return { sources: sourcesOf(kind, found), kind, fromCache: true };
  }
  try {
    return await downloadModel({ cache, endpoint, id, revision, token, signal, onProgress, onPlan, fetch, expected, partBytes, stallSeconds, checkConfig });
  } catch (error) {
    // A model that did not arrive whole is not kept as a model; the weights' whole parts are (the next
    // open goes on from them), unless the download was cancelled.
    await removeStoredModel({ id, revision, endpoint }, { caches, parts: !!signal?.aborted });
    throw error;
  }
}

/**
 * Before the weights: how much the download will be, from a HEAD of each file still to fetch (the
 * weights' behind the Hub's redirect) -> onPlan({files: [{file, bytes}], bytes}). A size the Hub does
 * not give counts as 0 in the plan's words (the download itself checks what arrives), except a shard's:
 * without it the shards cannot be summed against a lab's memory, so the model is refused before any
 * shard comes; a HEAD that fails is left to the download itself to report.
 */
async function announceSize({ cache, endpoint, id, revision, token, signal, fetch, kind, onPlan, fetchIndex }) {
  const files = [];
  const head = async (file) => {
    if (await cache.match(hubFileUrl(endpoint, id, revision, file))) return null;
    try {
      const r = await fetch(hubFileUrl(endpoint, id, revision, file), { method: 'HEAD', headers: authorization(token), signal });
      return r.ok ? announcedSize(r) ?? NaN : null;
    } catch {
      return null;
    }
  };
  for (const file of [...kind.files.required, ...kind.files.optional]) {
    const bytes = await head(file);
    if (bytes !== null) files.push({ file, bytes: bytes || 0 });
  }
  for (const file of kind.files.weights) {
    const bytes = await head(file);
    if (bytes === null && !(file === SHARD_INDEX && (await cache.match(hubFileUrl(endpoint, id, revision, file))))) continue;
    files.push({ file, bytes: bytes || 0 });
    if (file === SHARD_INDEX && (await fetchIndex())) {
      // A sharded model: the index (a small file) now, then every shard's size before any shard comes.
      let names;
      try {
        names = shardNames(await (await cache.match(hubFileUrl(endpoint, id, revision, SHARD_INDEX))).text());
      } catch (error) {
        throw new HubError(`${id}: ${error.message}`);
      }
      let shardBytes = 0;
      for (const name of names) {
        const size = await head(name);
        if (Number.isNaN(size)) throw new HubError(shardSizeUnknownMessage(id, name));
        if (size !== null) files.push({ file: name, bytes: size });
        shardBytes += size ?? 0;
      }
      if (shardBytes > MAX_WEIGHT_BYTES) throw new HubError(shardsTooLargeMessage(id, names.length, shardBytes));
    }
    break;
  }
  onPlan({ files, bytes: files.reduce((sum, f) => sum + f.bytes, 0) });
  return new Map(files.map((f) => [f.file, f.bytes]));
}

async function downloadModel({ cache, endpoint, id, revision, token, signal, onProgress, onPlan, fetch, expected, partBytes, stallSeconds, checkConfig }) {
  let announced = new Map(); // file -> the size its HEAD gave, once announceSize has run
  const fetchFile = (file) => download({ cache, endpoint, id, revision, file, token, signal, onProgress, fetch, announced: announced.get(file) ?? 0,
    ranged: isWeightsFile(file), partBytes, stallSeconds });
  const have = async (file) => !!(await cache.match(hubFileUrl(endpoint, id, revision, file))) || fetchFile(file);
  if (!(await have('config.json'))) throw new HubError(`${id}: no such model on ${endpoint} (config.json not found at revision ${revision})`);
  const config = await (await cache.match(hubFileUrl(endpoint, id, revision, 'config.json'))).text();
  let modelType;
  try {
    modelType = JSON.parse(config)?.model_type;
  } catch {
    throw new HubError(`${id}: its config.json is not JSON`);
  }
  const kind = MODEL_KINDS.find((k) => k.modelTypes.includes(modelType)) ?? expected;
  if (!kind) throw new HubError(`${id}: config.json's model_type "${String(modelType).slice(0, 40)}" is not a model this app reads`);
  // The kind's own check of config.json (the module's: the memory the model needs, model_memory.h), before any other file.
  const problem = checkConfig(kind.kind, config);
  if (problem) throw new HubError(`${id}: ${problem}; nothing of its weights was downloaded`);
  announced = await announceSize({ cache, endpoint, id, revision, token, signal, fetch, kind, onPlan, fetchIndex: () => have(SHARD_INDEX) });
  for (const file of kind.files.required) {
    if (!(await have(file))) throw new HubError(`${id}: the model has no ${file}, which a ${kind.title} checkpoint needs`);
  }
  for (const file of kind.files.optional) await have(file);
  let weights = false;
  for (const file of kind.files.weights) {
    if (await have(file)) {
      // A sharded model: each shard the index names, once (announceSize has checked their names and sum).
      if (file === SHARD_INDEX) {
        const names = shardNames(await (await cache.match(hubFileUrl(endpoint, id, revision, SHARD_INDEX))).text());
        for (const name of names) {
          if (!(await have(name))) throw new HubError(`${id}: ${SHARD_INDEX} names the shard ${name}, which the Hub does not have at revision ${revision}`);
        }
      }
      weights = true;
      break;
    }
  }
  if (!weights) throw new HubError(`${id}: the model has none of ${kind.files.weights.join(', ')} (the weights a ${kind.title} checkpoint is read from)`);
  const found = await cachedFiles(cache, endpoint, id, revision, kindFiles(kind));
  return { sources: sourcesOf(kind, found), kind, fromCache: false };
}

/** A cached file's response -> {endpoint, id, revision, file}, from the header it was stored with. */
function originOf(response, header = ORIGIN_HEADER) {
  try {
    const o = JSON.parse(response?.headers.get(header) ?? 'null');
    return o && typeof o.id === 'string' && typeof o.endpoint === 'string' ? o : null;
  } catch {
    return null;
  }
}

/** The models kept, with their files and size: [{id, revision, endpoint, files, bytes}]. */
export async function storedModels({ caches = globalThis.caches } = {}) {
  if (!caches) return [];
  const cache = await caches.open(CACHE);
  const models = new Map();
  for (const request of await cache.keys()) {
    const response = await cache.match(request);
    const whole = originOf(response), part = whole ? null : originOf(response, PART_HEADER);
    const o = whole ?? part;
    if (!o) continue;
    const key = JSON.stringify([o.endpoint, o.id, o.revision]);
    const model = models.get(key) ?? { id: o.id, revision: o.revision, endpoint: o.endpoint, files: [], bytes: 0, partial: false, stalled: false };
    if (whole) model.files.push(o.file);
    model.partial ||= !!part; // a download that broke off: its parts wait for the next open
    model.stalled ||= part?.part === STALLED_PART; // ... and it stopped because the Hub stopped sending
    model.bytes += (await response.blob()).size;
    models.set(key, model);
  }
  return [...models.values()].sort((a, b) => a.id.localeCompare(b.id));
}

/** Removes a kept model's files (and, with parts, the parts of a download that broke off) -> how many were removed. */
export async function removeStoredModel({ id, revision, endpoint }, { caches = globalThis.caches, parts: withParts = true } = {}) {
  if (!caches) return 0;
  const cache = await caches.open(CACHE);
  let removed = 0;
  for (const request of await cache.keys()) {
    const response = await cache.match(request);
    const parts = originOf(response) ?? (withParts ? originOf(response, PART_HEADER) : null);
    if (parts && parts.id === id && parts.revision === revision && parts.endpoint === endpoint && (await cache.delete(request))) removed += 1;
  }
  return removed;
}
