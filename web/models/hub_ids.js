// Hugging Face Hub model ids and the URLs of their files, as huggingface_hub writes them, for the page
// (web/models/hub_store.js) and the CLI (web/cli/hub.mjs) alike. No DOM and no Node API.
import { MAX_WEIGHT_BYTES, SHARD_INDEX, WEIGHT_FILES, smallFileLimit } from './checkpoint_files.js';
import { megabytes } from '../shared/megabytes.js';

const NAME = '[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?';
const MODEL_ID = new RegExp(`^(?:${NAME}/)?${NAME}$`);
const REVISION = /^[A-Za-z0-9._/-]{1,100}$/;

export const DEFAULT_ENDPOINT = 'https://huggingface.co';

/** "ORG/NAME@REVISION" (ORG/ and @REVISION optional) -> {id, revision}, or null when it is not one. */
export function parseModelId(text) {
  const value = String(text ?? '').trim();
  const at = value.lastIndexOf('@');
  const id = at > 0 ? value.slice(0, at) : value;
  const revision = at > 0 ? value.slice(at + 1) : 'main';
  if (!MODEL_ID.test(id) || id.includes('--') || id.includes('..')) return null;
  if (revisionProblem(revision)) return null;
  return { id, revision };
}

/**
 * Why `revision` is not a name git gives a branch, tag or commit (git check-ref-format's rules, which
 * the Hub's refs follow; "refs/pr/1" is one), as a sentence; null when it is one. A revision becomes a
 * path in the cache (refs/REVISION), so "a/.", "x/" or "./." must never reach the disk.
 */
export function revisionProblem(revision) {
  const r = String(revision);
  const why = !REVISION.test(r) ? 'only letters, digits and . _ - / (at most 100)'
    : r.includes('..') ? 'no ".."'
      : r.split('/').some((part) => part === '') ? 'no empty part (a "/" at either end, or "//")'
        : r.split('/').some((part) => part.startsWith('.') || part.endsWith('.lock')) ? 'no part that starts with "." or ends with ".lock"'
          : r.endsWith('.') ? 'no "." at the end' : null;
  return why && `revision "${r.slice(0, 100)}" is not a branch, tag or commit name (${why})`;
}

/**
 * The name of a file's blob as the Hub gives it (X-Linked-Etag or ETag; W/ and quotes removed) -> the
 * name, when it is a file hash as the Hub's always are (git's sha1, 40 hex digits, or LFS's sha256, 64);
 * else null. The name becomes a path (blobs/ETAG): "." or ".." would be the folder itself.
 */
export function blobName(etag) {
  const name = String(etag ?? '').replace(/^W\//, '').replace(/"/g, '');
  return /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(name) ? name : null;
}

/**
 * A redirect's Location -> the URL it leads to when it is relative (no scheme, no host: the Hub's answer
 * for a renamed repository, "/google-bert/bert-base-uncased/resolve/main/config.json"), else null. A
 * HEAD follows such redirects on the same host, as huggingface_hub does, and never an absolute one (the
 * CDN's: its headers are not the Hub's).
 */
export function relativeRedirect(url, location) {
  if (!location || /^[A-Za-z][A-Za-z0-9+.-]*:/.test(location) || location.startsWith('//')) return null;
  const next = new URL(location, url);
  return next.origin === new URL(url).origin ? next.href : null;
}

/**
 * A download that brings fewer than STALL_BYTES in STALL_SECONDS has stalled (a server that sends
 * nothing, or a byte at a time): the CLI stops it (HF_HUB_DOWNLOAD_TIMEOUT sets the seconds, 10 by
 * default as huggingface_hub's), the page tries the part again and then stops.
 */
export const STALL_BYTES = 1024;
export const STALL_SECONDS = 10;

/**
 * Watches a download's pace: progress(bytes so far) as bytes arrive; every `seconds` a window that
 * brought fewer than STALL_BYTES aborts `signal` (a merge of the caller's signal and the watch's) with
 * an Error named 'StallError'. stop() ends the watch. Timers only: no DOM and no Node API.
 */
export function stallWatch(seconds, outer = null) {
  const controller = new AbortController();
  const abort = () => controller.abort(outer.reason);
  outer?.addEventListener('abort', abort, { once: true });
  let bytes = 0, windowStart = 0;
  const stalled = () => Object.assign(new Error(`less than ${STALL_BYTES} bytes arrived in ${seconds} s`),
    { name: 'StallError' });
  const timer = setInterval(() => {
    if (bytes - windowStart < STALL_BYTES) controller.abort(stalled());
    windowStart = bytes;
  }, seconds * 1000);
  timer.unref?.();
  return {
    signal: controller.signal,
    progress(n) { bytes = n; },
    get stalled() { return controller.signal.aborted && controller.signal.reason?.name === 'StallError'; },
    stop() {
      clearInterval(timer);
      outer?.removeEventListener('abort', abort);
    },
  };
}

/**
 * Whether `file` is a weights file (model.safetensors, pytorch_model.bin, a shard that an index names:
 * any other *.safetensors): its limit is a lab's memory, not a small file's. The index is a small file.
 */
export const isWeightsFile = (file) => file !== SHARD_INDEX && (WEIGHT_FILES.some(([name]) => name === file) || String(file).endsWith('.safetensors'));

/** The most bytes `file` may have, as the openers read it (checkpoint_files.js). */
export const fileLimit = (file) => (isWeightsFile(file) ? MAX_WEIGHT_BYTES : smallFileLimit(file));

/**
 * The sentence for a file larger than it may be: `bytes` announced, or (arrived) its limit passed while
 * it came. A weights file's limit is the memory a lab holds, said with the memory the file needs.
 */
export function tooLargeMessage(id, file, bytes, { arrived = false } = {}) {
  const said = arrived ? `more than ${megabytes(bytes)} of ${file} arrived` : `${file} is ${megabytes(bytes)}`;
  return isWeightsFile(file)
    ? `${id}: ${said}: its weights need at least that much memory, more than the ${megabytes(MAX_WEIGHT_BYTES)} a lab `
      + `holds (a browser tab's WebAssembly memory beside its work); nothing of it was downloaded or kept`
    : `${id}: ${said}, more than a ${file} can be (at most ${megabytes(smallFileLimit(file))}); nothing of it was kept`;
}

/**
 * A file's size from the Hub's answer to a HEAD ({status, headers}): X-Linked-Size (a large file's, on the
 * redirect to the CDN), else a 2xx answer's Content-Length (a redirect's is its own body's), when written
 * as plain decimal digits; null otherwise (missing, negative, "1e3": issue 48 found both taken as sizes,
 * and a missing one counted as 0 in a sharded model's budget).
 */
export function announcedSize({ status, headers }) {
  const text = headers.get('x-linked-size') ?? (status >= 200 && status < 300 ? headers.get('content-length') : null);
  return text !== null && /^\d{1,16}$/.test(text.trim()) ? Number(text.trim()) : null;
}

/** The sentence for a shard whose size the Hub does not say: the shards' budget cannot be checked. */
export const shardSizeUnknownMessage = (id, name) => `${id}: the Hub's answer for the shard ${name} gives no size `
  + '(X-Linked-Size or Content-Length), so the shards cannot be summed against the memory a lab holds before they are '
  + 'downloaded; nothing of them was downloaded';

/** The sentence for a sharded model whose shards, summed before any is downloaded, pass a lab's memory. */
export const shardsTooLargeMessage = (id, count, bytes) => `${id}: its ${count} shards (${SHARD_INDEX}) are `
  + `${megabytes(bytes)} in all: its weights need at least that much memory, more than the `
  + `${megabytes(MAX_WEIGHT_BYTES)} a lab holds (a browser tab's WebAssembly memory beside its work); nothing of them `
  + 'was downloaded or kept';

/**
 * Seconds from an environment variable such as HF_HUB_DOWNLOAD_TIMEOUT (unset: the default) -> a number,
 * or a thrown message.
 */
export function secondsSetting(name, value, fallback) {
  if (value === undefined || value === '') return fallback;
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds <= 0) throw new Error(`${name} must be a number of seconds above 0, got `
    + `"${String(value).slice(0, 40)}"`);
  return seconds;
}

/** An endpoint as typed -> its canonical form (no trailing slash), or null when it is not an http(s) URL. */
export function parseEndpoint(text) {
  try {
    const url = new URL(String(text ?? '').trim() || DEFAULT_ENDPOINT);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
    return url.href.replace(/\/+$/, '');
  } catch {
    return null;
  }
}

/** {endpoint}/{id}/resolve/{revision}/{file}: where the Hub serves a file (redirecting large ones to its CDN). */
export const hubFileUrl = (endpoint,
  id, revision, file) => `${endpoint}/${id}/resolve/${encodeURIComponent(revision)}/${file}`;

/**
 * A refused request as a sentence, from its status and the Hub's X-Error-Code header (what
 * huggingface_hub's errors are built from) -> the message, or null when the Hub simply has no such file
 * (404, EntryNotFound: the caller decides whether that matters). tokenWhere: where a token is given
 * ("HF_TOKEN" in the CLI, "the Token field" on the page).
 */
export function hubRefusal({ id, endpoint, revision, file, status, errorCode, token, tokenWhere }) {
  switch (errorCode) {
    case 'EntryNotFound': return null;
    case 'RepoNotFound':
      return `${id}: no such model on ${endpoint}, or a private `
        + `one${token ? ' the token given cannot see' : `: give a token with access (${tokenWhere})`}`;
    case 'GatedRepo':
      return `${id} is gated: accept its conditions on its page (${endpoint}/${id}) with your account, then give that `
        + `account's token (${tokenWhere})`;
    case 'RevisionNotFound': return `${id} has no revision "${revision}" (a branch, tag or commit)`;
    case 'DisabledRepo': return `${id} has been disabled on the Hub: it cannot be downloaded`;
    default: break;
  }
  if (status === 404) return null;
  if (status === 401 || status === 403) {
    return `${id}: the Hub refused ${file} (HTTP ${status}): a gated or private model needs a token with access `
      + `(${tokenWhere})${token ? '; the one given has none' : ''}`;
  }
  return `${id}: the Hub answered HTTP ${status} for ${file}`;
}

/** The header a token goes in ("Authorization: Bearer"), or none. */
export const authorization = (token) => (token ? { authorization: `Bearer ${token}` } : {});

/**
 * A 206 answer's Content-Range (bytes FIRST-LAST/SIZE) -> {first, size} (size NaN for '*'), or null when
 * there is none (or, on a page, the CDN does not expose it).
 */
export function contentRange(response) {
  const m = /^bytes (\d+)-\d+\/(\d+|\*)$/.exec(response.headers.get('content-range') ?? '');
  return m ? { first: Number(m[1]), size: Number(m[2]) } : null;
}

/** A failed fetch that followed redirects in a loop (fetch gives up after 20) -> true. */
export const isRedirectLoop = (error) => /redirect count exceeded|too many redirects|redirect loop/i.test(`${error?.message} ${error?.cause?.message ?? ''}`);
