// Models opened by their Hub id on the page, kept in the browser's Cache Storage so that they open again
// with no network (on a train, in a classroom whose Wi-Fi drops). Runs in the worker; no DOM.
//
//   openFromHub({id, revision, endpoint, token, lab, signal, onProgress, onPlan, checkConfig}) -> {sources, kind, fromCache}
//     (onPlan: the files still to download and their sizes, before the first of them; checkConfig(kind,
//     config.json's text) -> '' or why the model cannot open, asked before any other file: the module's)
//     The files of the one plan (web/models/hub_plan.js: config.json first; its model_type says the kind;
//     then the row's tokenizer files and the weights, model.safetensors before pytorch_model.bin, as
//     from_pretrained prefers them), each fetched from {endpoint}/{id}/resolve/{revision}/{file} with redirects followed
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
import { STALL_BYTES, STALL_SECONDS, announcedSize, authorization, contentRange, fileLimit, hubFileUrl, hubRefusal,
  isRedirectLoop, isWeightsFile, stallWatch, tooLargeMessage } from './hub_ids.js';
import { HubError, drivePlan, hubPlan, keptModel } from './hub_plan.js';
import { megabytes } from '../shared/megabytes.js';

export { HubError };

const CACHE = 'attnlab-hub-v1';
const ORIGIN_HEADER = 'x-attnlab-hub-file';
const PART_HEADER = 'x-attnlab-hub-part'; // a part of a file still downloading: {endpoint, id, revision, file, part}
export const PART_BYTES = 16 * 1024 * 1024;
/** How many times a stalled part is asked for before the download stops (its whole parts kept). */
export const PART_TRIES = 3;
const STALLED_PART = 'stalled'; // the part "number" of the marker a stalled download leaves

const tooLarge = (id, file, bytes, arrived = false) => new HubError(tooLargeMessage(id, file, bytes, { arrived }));


/** A cached file's Blob as a source (the shape every opener reads). */
const blobSource = (name, blob) => ({
  name,
  size: blob.size,
  async read(offset, length) {
    return new Uint8Array(await blob.slice(offset, offset + length).arrayBuffer());
  },
  text: () => blob.text(),
});

async function openCache(caches) {
  if (!caches) throw new HubError('this browser keeps no files for pages (no Cache Storage): open the '
    + 'checkpoint\'s folder instead');
  return caches.open(CACHE);
}

/** The cached files as sources for the opener (the shape every opener reads), in the order given. */
async function sourcesOf(cache, url, files) {
  const sources = [];
  for (const file of files) sources.push(blobSource(file, await (await cache.match(url(file))).blob()));
  return sources;
}

/**
 * Fetches one file into the cache -> true, or false when the Hub has no such file (404).
 * onProgress({file, bytes, total}) as it arrives.
 */
async function download({ cache, endpoint, id, revision, file, token, signal, onProgress, fetch, announced = 0,
  ranged = false, partBytes = PART_BYTES, stallSeconds = STALL_SECONDS }) {
  if (announced > fileLimit(file)) throw tooLarge(id, file, announced);
  if (ranged && announced > 0) return downloadInParts({ cache, endpoint, id, revision, file, token, signal, onProgress,
    fetch, size: announced, partBytes, stallSeconds });
  const url = hubFileUrl(endpoint, id, revision, file);
  const response = await request({ fetch, url, headers: authorization(token), signal, id, file, endpoint });
  if (!response.ok) return refused({ response, id, endpoint, revision, file, token });
  if (!response.body) throw new HubError(`${id}: the Hub answered HTTP ${response.status} for ${file} with no body`);
  const total = Number(response.headers.get('content-length')) || 0;
  // The size announced before the download (a HEAD) and the one that comes differ: the file changed
  // between the two requests (a new commit on the branch).
  if (announced && total && announced !== total) {
    await response.body.cancel();
    throw new HubError(`${id}: ${file} changed size between two requests (${announced} bytes, then ${total}): the `
      + 'model was updated while it downloaded; nothing of it was kept: open it again');
  }
  if (total > fileLimit(file)) {
    await response.body.cancel();
    throw tooLarge(id, file, total);
  }
  await storeWhole({ cache, endpoint, id, revision, file, signal, onProgress, response, total });
  return true;
}

// A file's whole body into the cache as the file's entry (what storedModels() lists it as).
const wholeTag = (endpoint,
  id, revision, file) => ({ [ORIGIN_HEADER]: JSON.stringify({ endpoint, id, revision, file }) });
const storeWhole = ({ cache, endpoint, id, revision, file, signal, onProgress, response, total }) => storeBody({
  cache, key: hubFileUrl(endpoint, id, revision, file), response, headers: wholeTag(endpoint, id, revision, file),
  expected: total, most: fileLimit(file), onBytes: (bytes) => onProgress({ file, bytes, total }),
  failure: (what) => (what.tooMuch ? tooLarge(id, file, fileLimit(file), true) : failure(id, file, signal, what,
    'nothing of it was kept')) });

// A download that went wrong, as a sentence: cancelled, storage full, broken off, or short.
function failure(id, file, signal, { error, bytes, total }, kept, next = 'open it again') {
  if (signal?.aborted) return new HubError(`cancelled: ${id} was not opened and nothing of ${file} was kept`);
  if (error?.name === 'QuotaExceededError') {
    return new HubError(`not enough storage for ${id}'s ${file}${total ? ` (${megabytes(total)})` : ''}: remove a `
      + 'stored model below, or free space in the browser');
  }
  if (error) return new HubError(`${id}: the download of ${file} broke off after ${megabytes(bytes)} `
    + `(${error?.message ?? error}); ${kept}: ${next}`);
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
    await cache.put(key, new Response(counted,
      { headers: { 'content-type': 'application/octet-stream', ...headers } }));
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
async function downloadInParts({ cache, endpoint, id, revision, file, token, signal, onProgress, fetch, size,
  partBytes, stallSeconds }) {
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
        const whole = await downloadPart({ cache, url, id, revision, endpoint, file, token, signal: watch.signal,
          outer: signal, onProgress, fetch, size, begin, end, done, tag: tag(i), key: partKey(url, i),
          progress: watch.progress });
        if (whole) return true;
        break;
      } catch (error) {
        if (!watch.stalled) throw error;
        if (tries >= PART_TRIES) {
          // Marked for the list of kept models ("stalled"); the whole parts stay for the next open.
          await cache.put(partKey(url, STALLED_PART), new Response('', { headers: tag(STALLED_PART) }));
          throw new HubError(`${id}: the download of ${file} stalled: less than ${STALL_BYTES} bytes arrived in `
            + `${stallSeconds} s, ${PART_TRIES} times; ${megabytes(done)} that arrived whole are kept: open it again `
            + 'to go on from there');
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
    await cache.put(url, new Response(new Blob(parts),
      { headers: { 'content-type': 'application/octet-stream', ...wholeTag(endpoint, id, revision, file) } }));
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
async function downloadPart({ cache, url, id, revision, endpoint, file, token, signal, outer, onProgress, fetch, size,
  begin, end, done, tag, key, progress }) {
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
    throw new HubError(`${id}: ${file} changed size between two requests (${size} bytes, then ${range.size}): the `
      + 'model was updated while it downloaded; nothing of it was kept: open it again');
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
      : failure(id, file, outer, { ...what, bytes: done + what.bytes, total: size },
        'the parts that arrived whole are kept', 'open it again to go on from them')) });
  return false;
}

async function removeParts(cache, url) {
  for (const request of await cache.keys()) if (request.url.startsWith(`${url}?attnlab-part=`)) await cache.delete(request);
}

// outer: the caller's own signal (Cancel), where `signal` also carries a stall watch's abort.
async function request({ fetch, url, headers, signal, outer = signal, id, file, endpoint, method = 'GET' }) {
  try {
    return await fetch(url, { method, headers, signal, redirect: 'follow' });
  } catch (error) {
    if (signal?.aborted && !outer?.aborted) throw signal.reason; // a stall: the caller tries again
    if (outer?.aborted) throw new HubError(`cancelled: ${id} was not opened and nothing of ${file} was kept`);
    if (isRedirectLoop(error)) throw new HubError(`${id}: ${file} redirects in a loop at ${endpoint}: is it a Hugging `
      + 'Face endpoint (Hub settings)?');
    throw new HubError(`cannot reach ${endpoint} for ${id} (${error.message}): a model opens offline only once it has `
      + 'been opened here with the network');
  }
}

// A refused answer: the Hub's sentence, or false for a file it does not have.
async function refused({ response, id, endpoint, revision, file, token }) {
  const why = hubRefusal({ id, endpoint, revision, file, status: response.status,
    errorCode: response.headers.get('x-error-code'), token, tokenWhere: 'the Token field' });
  await response.body?.cancel();
  if (why) throw new HubError(why);
  return false;
}

/**
 * id, revision, endpoint (canonical), token (or null), lab (the lab's id: the kinds it reads), signal,
 * onProgress -> {sources, kind, fromCache}. The files are those of the one plan (hub_plan.js), fetched
 * here into Cache Storage. Throws a HubError naming the id, the file and what to do.
 */
export async function openFromHub({ id, revision = 'main', endpoint, token = null, lab, signal, onProgress = () => {},
  onPlan = () => {}, caches = globalThis.caches, fetch = globalThis.fetch.bind(globalThis), partBytes = PART_BYTES,
  stallSeconds = STALL_SECONDS, checkConfig = () => '', unreadArchitecture = () => '' }) {
  const cache = await openCache(caches);
  const url = (file) => hubFileUrl(endpoint, id, revision, file);
  const kept = (file) => cache.match(url(file));
  const text = async (file) => (await kept(file)).text();
  // Whole in the cache: no network at all.
  const whole = await keptModel(lab, { has: async (file) => !!(await kept(file)), text });
  if (whole) return { sources: await sourcesOf(cache, url, whole.files), kind: whole.kind, fromCache: true };
  const announced = new Map(); // file -> the size its HEAD gave: a weights file that has one comes in parts
  const io = {
    async size(file) {
      const copy = await kept(file);
      if (copy) return (await copy.blob()).size;
      const bytes = await headSize({ fetch, url: url(file), id, endpoint, revision, file, token, signal });
      if (Number.isFinite(bytes)) announced.set(file, bytes);
      return bytes;
    },
    plan: (files) => onPlan({ files, bytes: files.reduce((sum, f) => sum + f.bytes, 0) }),
    fetch: async (file) => !!(await kept(file)) || download({ cache, endpoint, id, revision, file, token, signal,
      onProgress, fetch, announced: announced.get(file) ?? 0, ranged: isWeightsFile(file), partBytes, stallSeconds }),
    text,
  };
  try {
    const { kind, files } = await drivePlan(hubPlan({ id, revision, endpoint, lab, checkConfig,
      unreadArchitecture }), io);
    return { sources: await sourcesOf(cache, url, files), kind, fromCache: false };
  } catch (error) {
    // A model that did not arrive whole is not kept as a model; the weights' whole parts are (the next
    // open goes on from them), unless the download was cancelled.
    await removeStoredModel({ id, revision, endpoint }, { caches, parts: !!signal?.aborted });
    throw error;
  }
}

/**
 * A file's size from a HEAD (the weights' behind the Hub's redirect): a number, NaN when the Hub gives
 * none, null when it has no such file; a refusal is its HubError.
 */
async function headSize({ fetch, url, id, endpoint, revision, file, token, signal }) {
  const response = await request({ fetch, url, headers: authorization(token), signal, id, file, endpoint,
    method: 'HEAD' });
  if (response.ok) return announcedSize(response) ?? NaN;
  return refused({ response, id, endpoint, revision, file, token }).then(() => null);
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
    const model = models.get(key) ?? { id: o.id, revision: o.revision, endpoint: o.endpoint, files: [], bytes: 0,
      partial: false, stalled: false };
    if (whole) model.files.push(o.file);
    model.partial ||= !!part; // a download that broke off: its parts wait for the next open
    model.stalled ||= part?.part === STALLED_PART; // ... and it stopped because the Hub stopped sending
    model.bytes += (await response.blob()).size;
    models.set(key, model);
  }
  return [...models.values()].sort((a, b) => a.id.localeCompare(b.id));
}

/** Removes a kept model's files (and, with parts, the parts of a download that broke off) -> how many were removed. */
export async function removeStoredModel({ id, revision, endpoint },
  { caches = globalThis.caches, parts: withParts = true } = {}) {
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
