// Models opened by their Hub id on the page, kept in the browser's Cache Storage so that they open again
// with no network (on a train, in a classroom whose Wi-Fi drops). Runs in the worker; no DOM.
//
//   openFromHub({id, revision, endpoint, token, expect, signal, onProgress, onPlan}) -> {sources, kind, fromCache}
//     (onPlan: the files still to download and their sizes, before the first of them)
//     The kind's files (web/models/registry.js: config.json first; its model_type says the kind; then the
//     tokenizer files and the weights, model.safetensors before pytorch_model.bin, as from_pretrained
//     prefers them), each fetched from {endpoint}/{id}/resolve/{revision}/{file} with redirects followed
//     and streamed into the cache (never whole in memory), then read back as disk-backed Blobs in slices
//     like a file the user chose. A token goes as "Authorization: Bearer" and is never stored.
//   storedModels() -> [{id, revision, endpoint, files, bytes}]; removeStoredModel(id, revision, endpoint).
//
// A download that is cancelled, breaks off or is short stores nothing: Cache Storage's put() keeps an
// entry only once its whole body has arrived, and a body shorter than its Content-Length is removed.
import { CheckpointError } from './checkpoint_files.js';
import { hubFileUrl, hubRefusal, isRedirectLoop } from './hub_ids.js';
import { MODEL_KINDS } from './registry.js';

const CACHE = 'attnlab-hub-v1';
const ORIGIN_HEADER = 'x-attnlab-hub-file';

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

const mb = (n) => `${(n / 1e6).toFixed(n < 1e7 ? 1 : 0)} MB`;

async function openCache(caches) {
  if (!caches) throw new HubError('this browser keeps no files for pages (no Cache Storage): open the checkpoint\'s folder instead');
  return caches.open(CACHE);
}

/** The files of `kind` found in the cache for id@revision at endpoint -> Map(file -> Blob). */
async function cachedFiles(cache, endpoint, id, revision, files) {
  const found = new Map();
  for (const file of files) {
    const response = await cache.match(hubFileUrl(endpoint, id, revision, file));
    if (response) found.set(file, await response.blob());
  }
  return found;
}

const complete = (kind, found) => kind.files.required.every((f) => found.has(f)) && kind.files.weights.some((f) => found.has(f));
const kindFiles = (kind) => [...kind.files.required, ...kind.files.optional, ...kind.files.weights];

/** Sources for the opener: the required and optional files there are, and the first weights file there is. */
function sourcesOf(kind, found) {
  const weights = kind.files.weights.find((f) => found.has(f));
  return [...kind.files.required, ...kind.files.optional, weights].filter((f) => found.has(f)).map((f) => blobSource(f, found.get(f)));
}

/**
 * Fetches one file into the cache -> true, or false when the Hub has no such file (404).
 * onProgress({file, bytes, total}) as it arrives.
 */
async function download({ cache, endpoint, id, revision, file, token, signal, onProgress, fetch, announced = 0 }) {
  const url = hubFileUrl(endpoint, id, revision, file);
  let response;
  try {
    response = await fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {}, signal, redirect: 'follow' });
  } catch (error) {
    if (signal?.aborted) throw new HubError(`cancelled: ${id} was not opened and nothing of ${file} was kept`);
    if (isRedirectLoop(error)) throw new HubError(`${id}: ${file} redirects in a loop at ${endpoint}: is it a Hugging Face endpoint (Hub settings)?`);
    throw new HubError(`cannot reach ${endpoint} for ${id} (${error.message}): a model opens offline only once it has been opened here with the network`);
  }
  if (!response.ok) {
    const why = hubRefusal({ id, endpoint, revision, file, status: response.status, errorCode: response.headers.get('x-error-code'), token, tokenWhere: 'the Token field' });
    await response.body?.cancel();
    if (why) throw new HubError(why);
    return false;
  }
  if (!response.body) throw new HubError(`${id}: the Hub answered HTTP ${response.status} for ${file} with no body`);
  const total = Number(response.headers.get('content-length')) || 0;
  // The size announced before the download (a HEAD) and the one that comes differ: the file changed
  // between the two requests (a new commit on the branch).
  if (announced && total && announced !== total) {
    await response.body.cancel();
    throw new HubError(`${id}: ${file} changed size between two requests (${announced} bytes, then ${total}): the model was updated while it downloaded; nothing of it was kept: open it again`);
  }
  let bytes = 0;
  const counted = response.body.pipeThrough(new TransformStream({
    transform(chunk, controller) {
      bytes += chunk.byteLength;
      onProgress({ file, bytes, total });
      controller.enqueue(chunk);
    },
  }));
  try {
    await cache.put(url, new Response(counted, { headers: {
      'content-type': response.headers.get('content-type') ?? 'application/octet-stream',
      [ORIGIN_HEADER]: JSON.stringify({ endpoint, id, revision, file }), // what storedModels() lists it as
    } }));
  } catch (error) {
    await cache.delete(url);
    if (signal?.aborted) throw new HubError(`cancelled: ${id} was not opened and nothing of ${file} was kept`);
    if (error?.name === 'QuotaExceededError') {
      throw new HubError(`not enough storage for ${id}'s ${file}${total ? ` (${mb(total)})` : ''}: remove a stored model below, or free space in the browser`);
    }
    throw new HubError(`${id}: the download of ${file} broke off after ${mb(bytes)} (${error?.message ?? error}); nothing of it was kept: open it again`);
  }
  if (total && bytes !== total) {
    await cache.delete(url);
    throw new HubError(`${id}: the download of ${file} is not whole (${bytes} of ${total} bytes); nothing of it was kept: open it again`);
  }
  return true;
}

/**
 * id, revision, endpoint (canonical), token (or null), expect (the lab's kind), signal, onProgress ->
 * {sources, kind, fromCache}. Throws a HubError naming the id, the file and what to do.
 */
export async function openFromHub({ id, revision = 'main', endpoint, token = null, expect, signal, onProgress = () => {}, onPlan = () => {},
  caches = globalThis.caches, fetch = globalThis.fetch.bind(globalThis) }) {
  const cache = await openCache(caches);
  const expected = MODEL_KINDS.find((k) => k.kind === expect);
  // Complete in the cache: no network at all.
  for (const kind of [expected, ...MODEL_KINDS.filter((k) => k !== expected)]) {
    const found = await cachedFiles(cache, endpoint, id, revision, kindFiles(kind));
    if (complete(kind, found)) return { sources: sourcesOf(kind, found), kind, fromCache: true };
  }
  try {
    return await downloadModel({ cache, endpoint, id, revision, token, signal, onProgress, onPlan, fetch, expected });
  } catch (error) {
    // A model that did not arrive whole is not kept in part: the list of kept models shows only whole ones.
    await removeStoredModel({ id, revision, endpoint }, { caches });
    throw error;
  }
}

/**
 * Before the weights: how much the download will be, from a HEAD of each file still to fetch (the
 * weights' behind the Hub's redirect) -> onPlan({files: [{file, bytes}], bytes}). A size the Hub does
 * not give counts as 0; a HEAD that fails is left to the download itself to report.
 */
async function announceSize({ cache, endpoint, id, revision, token, signal, fetch, kind, onPlan }) {
  const files = [];
  const head = async (file) => {
    if (await cache.match(hubFileUrl(endpoint, id, revision, file))) return null;
    try {
      const r = await fetch(hubFileUrl(endpoint, id, revision, file), { method: 'HEAD', headers: token ? { authorization: `Bearer ${token}` } : {}, signal });
      return r.ok ? Number(r.headers.get('content-length')) || 0 : null;
    } catch {
      return null;
    }
  };
  for (const file of [...kind.files.required, ...kind.files.optional]) {
    const bytes = await head(file);
    if (bytes !== null) files.push({ file, bytes });
  }
  for (const file of kind.files.weights) {
    const bytes = await head(file);
    if (bytes !== null) {
      files.push({ file, bytes });
      break;
    }
  }
  onPlan({ files, bytes: files.reduce((sum, f) => sum + f.bytes, 0) });
  return new Map(files.map((f) => [f.file, f.bytes]));
}

async function downloadModel({ cache, endpoint, id, revision, token, signal, onProgress, onPlan, fetch, expected }) {
  let announced = new Map(); // file -> the size its HEAD gave, once announceSize has run
  const fetchFile = (file) => download({ cache, endpoint, id, revision, file, token, signal, onProgress, fetch, announced: announced.get(file) ?? 0 });
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
  announced = await announceSize({ cache, endpoint, id, revision, token, signal, fetch, kind, onPlan });
  for (const file of kind.files.required) {
    if (!(await have(file))) throw new HubError(`${id}: the model has no ${file}, which a ${kind.title} checkpoint needs`);
  }
  for (const file of kind.files.optional) await have(file);
  let weights = false;
  for (const file of kind.files.weights) {
    if (await have(file)) {
      weights = true;
      break;
    }
  }
  if (!weights) throw new HubError(`${id}: the model has none of ${kind.files.weights.join(', ')} (the weights a ${kind.title} checkpoint is read from)`);
  const found = await cachedFiles(cache, endpoint, id, revision, kindFiles(kind));
  return { sources: sourcesOf(kind, found), kind, fromCache: false };
}

/** A cached file's response -> {endpoint, id, revision, file}, from the header it was stored with. */
function originOf(response) {
  try {
    const o = JSON.parse(response?.headers.get(ORIGIN_HEADER) ?? 'null');
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
    const parts = originOf(response);
    if (!parts) continue;
    const key = JSON.stringify([parts.endpoint, parts.id, parts.revision]);
    const model = models.get(key) ?? { id: parts.id, revision: parts.revision, endpoint: parts.endpoint, files: [], bytes: 0 };
    model.files.push(parts.file);
    model.bytes += (await response.blob()).size;
    models.set(key, model);
  }
  return [...models.values()].sort((a, b) => a.id.localeCompare(b.id));
}

/** Removes a kept model's files -> how many were removed. */
export async function removeStoredModel({ id, revision, endpoint }, { caches = globalThis.caches } = {}) {
  if (!caches) return 0;
  const cache = await caches.open(CACHE);
  let removed = 0;
  for (const request of await cache.keys()) {
    const parts = originOf(await cache.match(request));
    if (parts && parts.id === id && parts.revision === revision && parts.endpoint === endpoint && (await cache.delete(request))) removed += 1;
  }
  return removed;
}
