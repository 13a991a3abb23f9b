// A model by its Hub id for the CLI's --model, kept in the Hugging Face cache so that it opens with no
// network afterwards, and so that a model the course notebook's from_pretrained already downloaded
// opens here too (and what attnlab downloads, Python finds). The conventions are huggingface_hub's:
//
//   cache     $HF_HUB_CACHE, else $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub, else
//             ~/.cache/huggingface/hub; a model ORG/NAME lives in models--ORG--NAME/ as
//             blobs/ETAG (the files), snapshots/COMMIT/FILE (links to them), refs/REVISION (COMMIT)
//   download  {HF_ENDPOINT or https://huggingface.co}/ID/resolve/REVISION/FILE, redirects followed (the
//             weights sit behind a redirect to a CDN), HF_TOKEN sent as "Authorization: Bearer"
//   offline   HF_HUB_OFFLINE=1: the cache only, never the network
//   renamed   a HEAD answered with a relative redirect (a renamed repository: "gpt2" is now
//             "openai-community/gpt2") is followed on the same host; the commit and ETag come from
//             the last answer; the files are kept under the id the user typed
//   timeouts  HF_HUB_ETAG_TIMEOUT (10 s) for a HEAD's answer; HF_HUB_DOWNLOAD_TIMEOUT (10 s): a download
//             that brings less than STALL_BYTES in that many seconds is stopped as stalled (what
//             arrived is kept for the resume)
//   what is sent  Accept-Encoding: identity (the sizes are the files' own; a body is never inflated)
//
// What the Hub sends is checked before it becomes a path or fills the disk: the revision before any
// request (git's rules for a ref name), the commit (40 hex digits) and the ETag (a sha1 or sha256);
// a small file is capped at its opener's limit (checkpoint_files.js) while it arrives, a weights file
// announced larger than a lab can hold is refused before its body, and a body longer than announced is
// stopped; nothing refused is kept.
//
// A model already complete in the cache is used as it is (no network). A download goes to a temporary
// name and is renamed only once its size, and its sha256 where the Hub gives one (the ETag of a large
// file), check out: an interrupted download never leaves a file that looks whole.
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, symlink, writeFile, readlink, unlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { escapeControls, quoteText } from '../shared/quote_text.js';
import { megabyteFigure } from '../shared/megabytes.js';
import { DEFAULT_ENDPOINT, announcedSize, authorization, blobName, contentRange, fileLimit, hubFileUrl, hubRefusal,
  isRedirectLoop, parseModelId, relativeRedirect, revisionProblem, secondsSetting, STALL_BYTES, STALL_SECONDS,
  stallWatch, tooLargeMessage } from '../models/hub_ids.js';
import { HubError, drivePlan, hubPlan, keptModel } from '../models/hub_plan.js';

export { HubError, parseModelId };

/** The hub cache folder, from the environment as huggingface_hub reads it. */
export function hubCacheDir(env = process.env) {
  if (env.HF_HUB_CACHE) return env.HF_HUB_CACHE;
  if (env.HF_HOME) return path.join(env.HF_HOME, 'hub');
  return path.join(env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'huggingface', 'hub');
}

const repoDir = (cache, id) => path.join(cache, `models--${id.replace('/', '--')}`);
const exists = async (file) => !!(await stat(file).catch(() => null));
const isCommit = (revision) => /^[0-9a-f]{40}$/.test(revision);
/** How many relative redirects a HEAD follows (a renamed repository needs one). */
const MAX_RELATIVE_REDIRECTS = 10;

/**
 * The commit a revision names in the cache: the revision itself when it is one, else refs/REVISION's
 * text when that is a 40-hex commit. -> {commit} | {} (no ref) | {bad: the ref's text} (anything else:
 * a ref like "../../../x" would point the snapshot outside the cache, so it is never followed).
 */
async function cachedCommit(repo, revision) {
  if (isCommit(revision)) return { commit: revision };
  const text = await readFile(path.join(repo, 'refs', revision), 'utf8').catch(() => null);
  if (text === null) return {};
  return isCommit(text.trim()) ? { commit: text.trim() } : { bad: text };
}

/**
 * id@revision's snapshot in the cache: {whole: its folder} when it holds a whole model (hub_plan.js:
 * keptModel), {broken: its folder} when the folder is there without one (a download that broke off, or a
 * cache an older version left), else {}.
 */
async function cachedSnapshot(cache, id, revision, lab) {
  const { commit } = await cachedCommit(repoDir(cache, id), revision);
  if (!commit) return {};
  const snapshot = path.join(repoDir(cache, id), 'snapshots', commit);
  const whole = await keptModel(lab,
    { has: (file) => exists(path.join(snapshot, file)), text: (file) => readFile(path.join(snapshot, file), 'utf8') });
  if (whole) return { whole: snapshot };
  return (await stat(snapshot).catch(() => null))?.isDirectory() ? { broken: snapshot } : {};
}

/** A path as a POSIX shell reads it back whole: in single quotes, each ' written '\''. */
const shellQuoted = (p) => `'${p.replaceAll("'", "'\\''")}'`;

/** A progress line on stderr, only where a person watches it (a terminal). */
function progressBar(file, total) {
  if (!process.stderr.isTTY) return { update() {}, done() {} };
  let last = 0;
  let widest = 0; // the figures can shorten ("9.9" -> "10"): spaces cover what the last line wrote
  const draw = (bytes) => {
    const fraction = total ? bytes / total : 0;
    const bar = '#'.repeat(Math.round(fraction * 30)).padEnd(30, '.');
    const line = `${file.padEnd(24).slice(0, 24)} [${bar}] ${megabyteFigure(bytes)}/${megabyteFigure(total)} MB`;
    widest = Math.max(widest, line.length);
    process.stderr.write(`\r${line.padEnd(widest)}`);
  };
  return {
    update(bytes) {
      if (Date.now() - last < 100) return;
      last = Date.now();
      draw(bytes);
    },
    done(bytes) {
      draw(bytes);
      process.stderr.write('\n');
    },
  };
}

class Hub {
  constructor({ id, revision, env, cache }) {
    Object.assign(this, { id, revision, cache });
    this.endpoint = (env.HF_ENDPOINT || DEFAULT_ENDPOINT).replace(/\/+$/, '');
    this.token = env.HF_TOKEN || null;
    this.commit = null;
    this.heads = new Map(); // file -> its HEAD's {response, url}, from size() until fetchFile() uses it
    try {
      this.headSeconds = secondsSetting('HF_HUB_ETAG_TIMEOUT', env.HF_HUB_ETAG_TIMEOUT, 10);
      this.stallSeconds = secondsSetting('HF_HUB_DOWNLOAD_TIMEOUT', env.HF_HUB_DOWNLOAD_TIMEOUT, STALL_SECONDS);
    } catch (error) {
      throw new HubError(error.message);
    }
  }

  url(file) {
    return hubFileUrl(this.endpoint, this.id, this.revision, file);
  }

  /** The HubError of a file whose redirects go round (fetch's own limit, or MAX_RELATIVE_REDIRECTS hops). */
  redirectLoop(file) {
    return new HubError(`${this.id}: ${file} redirects in a loop at ${this.endpoint}: is it a Hugging Face `
      + 'endpoint (HF_ENDPOINT)?');
  }

  // One request; a failure to connect (or a signal's abort) becomes a HubError. init.range: ask for the
  // file from that byte on.
  async request(url, file, { range, signal, ...init }) {
    const headers = { ...authorization(this.token), 'accept-encoding': 'identity',
      ...(range ? { range: `bytes=${range}-` } : {}) };
    try {
      if (init.redirect !== 'follow') return await fetch(url, { ...init, headers, signal });
      return await this.followRedirects(url, file, { ...init, headers, signal });
    } catch (error) {
      if (error instanceof HubError) throw error;
      if (signal?.aborted) throw signal.reason;
      if (isRedirectLoop(error)) throw this.redirectLoop(file);
      throw Object.assign(new HubError(`cannot reach ${this.endpoint} for ${this.id} (${error.cause?.code ?? error.message}); `
        + 'a model opens offline once it is in the cache (HF_HUB_OFFLINE=1 never uses the network)'), { unreachable: true });
    }
  }

  /**
   * A GET that follows the Hub's redirects (to its CDN) itself, as fetch would, but only to http(s) URLs
   * (a redirect to file: was reported as "cannot reach": issue 48) and without the token past the Hub's
   * origin (as fetch drops Authorization across origins), at most MAX_RELATIVE_REDIRECTS hops.
   */
  async followRedirects(url, file, init) {
    let at = new URL(url), headers = init.headers;
    for (let hop = 0; hop <= MAX_RELATIVE_REDIRECTS; hop++) {
      const response = await fetch(at, { ...init, headers, redirect: 'manual' });
      const location = [301, 302, 303, 307, 308].includes(response.status) ? response.headers.get('location') : null;
      if (!location) return response;
      await response.body?.cancel();
      const next = new URL(location, at);
      if (next.protocol !== 'https:' && next.protocol !== 'http:') {
        throw new HubError(`${this.id}: ${file} redirects to a ${next.protocol} URL (${quoteText(next.href, 60)}); the `
          + `Hub's files are fetched over http(s) only`);
      }
      if (next.origin !== at.origin) headers = Object.fromEntries(Object.entries(headers).filter(([name]) => name !== 'authorization'));
      at = next;
    }
    throw this.redirectLoop(file);
  }

  /**
   * The file's metadata: a HEAD that follows relative redirects on the same host (a renamed
   * repository) and no other -> {response, url} (url: where the file is on the Hub now, which the
   * download asks). HF_HUB_ETAG_TIMEOUT bounds each answer.
   */
  async head(file) {
    let url = this.url(file);
    for (let hop = 0; hop <= MAX_RELATIVE_REDIRECTS; hop++) {
      const signal = AbortSignal.timeout(this.headSeconds * 1000);
      const response = await this.request(url, file, { method: 'HEAD', redirect: 'manual', signal }).catch((error) => {
        if (error?.name === 'TimeoutError') {
          throw new HubError(`${this.id}: ${this.endpoint} did not answer for ${file} within ${this.headSeconds} s `
            + '(HF_HUB_ETAG_TIMEOUT); a model opens offline once it is in the cache');
        }
        throw error;
      });
      const next = response.status >= 300 && response.status < 400 ? relativeRedirect(url,
        response.headers.get('location')) : null;
      if (!next) return { response, url };
      url = next;
    }
    throw this.redirectLoop(file);
  }

  // A refused answer as a sentence (hub_ids.js: the status and the Hub's X-Error-Code), or null for a 404.
  refusal(response, file) {
    return hubRefusal({ id: this.id, endpoint: this.endpoint, revision: this.revision, file, status: response.status,
      errorCode: response.headers.get('x-error-code'), token: this.token, tokenWhere: 'HF_TOKEN' });
  }

  /**
   * The plan's size request (hub_plan.js): a file's size from its HEAD, NaN when the Hub names none, null
   * when it has no such file; a refusal is its HubError. The HEAD is kept for the file's download.
   */
  async size(file) {
    const head = await this.head(file);
    if (head.response.status >= 400) {
      const why = this.refusal(head.response, file);
      if (why) throw new HubError(why);
      return null;
    }
    this.heads.set(file, head);
    return announcedSize(head.response) ?? NaN;
  }

  /**
   * Downloads one file into the cache (blobs/ETAG, linked from snapshots/COMMIT/FILE) -> true, or false
   * when the Hub has no such file (404).
   */
  async fetchFile(file) {
    // First the metadata, following only relative redirects: the commit the revision points to, and the
    // blob's name and size (for a large file: X-Linked-Etag, its sha256, and X-Linked-Size, on the
    // redirect to the CDN, whose ETags are its own), as huggingface_hub reads them.
    const { response: head, url } = this.heads.get(file) ?? (await this.head(file));
    this.heads.delete(file);
    if (head.status >= 400) {
      const why = this.refusal(head, file);
      if (why) throw new HubError(why);
      return false;
    }
    const h = head.headers;
    this.commit ??= h.get('x-repo-commit');
    if (!this.commit || !isCommit(this.commit)) {
      throw new HubError(`${this.id}: the Hub's answer for ${file} names no commit (X-Repo-Commit): is `
        + `${this.endpoint} a Hugging Face endpoint?`);
    }
    const etag = blobName(h.get('x-linked-etag') ?? h.get('etag'));
    if (!etag) throw new HubError(`${this.id}: the Hub's answer for ${file} has no usable ETag (a sha1 or sha256 of `
      + `the file): is ${this.endpoint} a Hugging Face endpoint?`);
    const size = announcedSize(head) ?? NaN;
    const limit = fileLimit(file);
    if (size > limit) throw new HubError(tooLargeMessage(this.id, file, size));
    const repo = repoDir(this.cache, this.id);
    const blob = path.join(repo, 'blobs', etag);
    await mkdir(path.dirname(blob), { recursive: true });
    if (!(await exists(blob))) await this.fetchBlob({ file, url, blob, etag, size, limit });
    const link = path.join(repo, 'snapshots', this.commit, file);
    await mkdir(path.dirname(link), { recursive: true });
    const target = path.relative(path.dirname(link), blob);
    if ((await readlink(link).catch(() => null)) !== target) {
      await unlink(link).catch(() => {});
      await symlink(target, link);
    }
    return true;
  }

  /**
   * The file's bytes into blobs/ETAG, through ETAG.incomplete: a download that broke off or stalled
   * keeps what arrived there, and the next run asks only for the rest (HTTP Range: bytes=N-), as
   * huggingface_hub resumes. A server that answers the Range with the whole file (200) is read from its
   * first byte again. The blob appears, by rename, only when its size and (for a large file) its sha256
   * check out. url: the file's URL after the HEAD's relative redirects.
   */
  async fetchBlob({ file, url, blob, etag, size, limit }) {
    const partial = `${blob}.incomplete`;
    let have = (await stat(partial).catch(() => null))?.size ?? 0;
    if (Number.isFinite(size) && have >= size) have = 0; // not a part of this file: start again
    // Stalled: fewer than STALL_BYTES in a window of HF_HUB_DOWNLOAD_TIMEOUT seconds, the answer's
    // headers included (a server that never answers, or trickles a byte at a time).
    const watch = stallWatch(this.stallSeconds);
    let bytes = have;
    // Ctrl-C: what arrived is on disk as .incomplete (never the blob); say so, and stop as a shell expects.
    const interrupted = () => {
      process.stderr.write(`\nattnlab: interrupted: ${bytes} bytes of ${file} are kept as ${path.basename(partial)}; `
        + `run the command again to go on from there\n`);
      process.exit(130);
    };
    process.once('SIGINT', interrupted);
    try {
      await this.download({ file, url, partial, etag, size, limit, have, signal: watch.signal,
        onBytes: (n) => { bytes = n; watch.progress(n - have); } });
    } catch (error) {
      if (!watch.stalled) throw error;
      throw new HubError(`${this.id}: the download of ${file} stalled: less than ${STALL_BYTES} bytes arrived in `
        + `${this.stallSeconds} s (HF_HUB_DOWNLOAD_TIMEOUT); ${bytes} bytes are kept as ${path.basename(partial)}: run `
        + 'the command again to go on from there');
    } finally {
      watch.stop();
      process.removeListener('SIGINT', interrupted);
    }
    await rename(partial, blob);
  }

  // fetchBlob's request and body; onBytes(total so far). Refusals and a body that is not the file remove
  // the part; a break or stall keeps it.
  async download({ file, url, partial, etag, size, limit, have, signal, onBytes }) {
    const response = await this.request(url, file, { redirect: 'follow', signal, ...(have ? { range: have } : {}) });
    if (!response.ok) {
      await response.body?.cancel();
      throw new HubError(this.refusal(response, file) ?? `${this.id}: ${file} went away while it was fetched (HTTP `
        + `${response.status})`);
    }
    // 206: the rest from byte `have` on; 200: the whole file (the server ignored the Range).
    const resumed = have > 0 && response.status === 206 && contentRange(response)?.first === have;
    const start = resumed ? have : 0;
    // The Hub named one size (X-Linked-Size) and the download brings another: the file changed between
    // the two requests (a new commit on the branch).
    // (A compressed answer's Content-Length is the compressed body's: it says nothing of the file.)
    const encoded = !/^(?:identity)?$/i.test(response.headers.get('content-encoding') ?? '');
    const length = encoded ? NaN : start + Number(response.headers.get('content-length') ?? NaN);
    if (Number.isFinite(size) && Number.isFinite(length) && length !== size) {
      await response.body?.cancel();
      await rm(partial, { force: true });
      throw new HubError(`${this.id}: ${file} changed size between two requests (${size} bytes, then ${length}): the `
        + 'model was updated while it downloaded; nothing was kept: run the command again');
    }
    if (length > limit) {
      await response.body?.cancel();
      await rm(partial, { force: true });
      throw new HubError(tooLargeMessage(this.id, file, length));
    }
    const hash = createHash('sha256');
    if (resumed) for await (const chunk of createReadStream(partial)) hash.update(chunk);
    const out = createWriteStream(partial, { flags: resumed ? 'a' : 'w' });
    const bar = progressBar(file, size);
    let bytes = start;
    // A body longer than announced (or, unannounced, than the file's limit) is not the file: a server
    // that compresses although asked not to can inflate 1 MB into gigabytes.
    const most = Number.isFinite(size) ? size : limit;
    try {
      for await (const chunk of response.body) {
        hash.update(chunk);
        bytes += chunk.length;
        onBytes(bytes);
        if (bytes > most) break;
        if (!out.write(chunk)) await new Promise((resolve) => out.once('drain', resolve));
        bar.update(bytes);
      }
    } catch (error) {
      await new Promise((resolve) => out.end(resolve));
      if (signal.aborted) throw signal.reason;
      throw new HubError(`${this.id}: the download of ${file} broke off after ${bytes} bytes `
        + `(${error.cause?.code ?? error.message}); what arrived is kept as ${path.basename(partial)}: run the command `
        + 'again to go on from there');
    }
    await new Promise((resolve, reject) => out.end((error) => (error ? reject(error) : resolve())));
    if (bytes > most) {
      await response.body?.cancel().catch(() => {});
      await rm(partial, { force: true });
      throw new HubError(Number.isFinite(size)
        ? `${this.id}: more than the ${size} bytes announced for ${file} arrived (a compressed answer, or not the `
          + 'file); nothing of it was kept'
        : tooLargeMessage(this.id, file, limit, { arrived: true }));
    }
    bar.done(bytes);
    const sha256 = hash.digest('hex');
    const problem = Number.isFinite(size) && bytes !== size ? `${bytes} bytes arrived of the ${size} announced`
      : /^[0-9a-f]{64}$/.test(etag) && sha256 !== etag ? `its sha256 is ${sha256}, the Hub's is ${etag}` : null;
    if (problem) {
      await rm(partial, { force: true });
      throw new HubError(`${this.id}: the download of ${file} is not whole (${problem}); nothing was kept: run `
        + 'the command again');
    }
  }
}


/**
 * --model's value -> a folder to open: the folder itself when there is one; else a Hub id (ORG/NAME or
 * NAME, @REVISION optional) resolved through the cache, downloading what is missing unless
 * HF_HUB_OFFLINE=1. lab: the id of the lab the command runs (the kinds it reads); the files fetched are
 * those of the one plan (hub_plan.js). checkConfig(kind, config.json's text) -> '' or why the model cannot
 * open (the module's check, the memory it needs included), asked before any other file; unreadArchitecture:
 * the module's, for a model_type the core knows and does not read (hub_plan.js). Throws a HubError
 * that names the id, the file and what to do.
 */
export async function resolveModelFolder(model,
  { lab, env = process.env, checkConfig = () => '', unreadArchitecture = () => '' } = {}) {
  if ((await stat(model).catch(() => null))?.isDirectory()) return model;
  const parsed = parseModelId(model);
  const at = model.lastIndexOf('@');
  if (!parsed && at > 0 && parseModelId(model.slice(0, at)) && revisionProblem(model.slice(at + 1))) {
    throw new HubError(`--model ${model.slice(0, 200)}: ${revisionProblem(model.slice(at + 1))}`);
  }
  if (!parsed) throw new HubError(`--model ${model}: not a folder, and not a Hub model id (ORG/NAME or NAME, `
    + 'optionally @REVISION)');
  const { id, revision } = parsed;
  const cache = hubCacheDir(env);
  const cached = await cachedSnapshot(cache, id, revision, lab);
  if (cached.whole) return cached.whole;
  if (['1', 'true', 'yes', 'on'].includes(String(env.HF_HUB_OFFLINE ?? '').toLowerCase())) {
    if (cached.broken) {
      // Online, the plan below fetches what the snapshot lacks; offline, nothing can, so say how to start over.
      // The path as it is (control characters escaped, as every line that carries a name from outside is).
      throw new HubError(`${id}@${revision}: the cache's snapshot ${escapeControls(cached.broken)} does not hold a `
        + 'whole model (a download that broke off, or one kept by an older version) and HF_HUB_OFFLINE is set: remove '
        + `it with rm -r ${escapeControls(shellQuoted(cached.broken))} and run once with the network`);
    }
    const { bad } = await cachedCommit(repoDir(cache, id), revision);
    if (bad !== undefined) {
      throw new HubError(`${id}@${revision}: the cache's ref ${path.join(repoDir(cache, id), 'refs', revision)} holds `
        + `${quoteText(bad.trim(), 60)}, not a commit (40 hexadecimal digits), and HF_HUB_OFFLINE is set: delete that `
        + 'file and run once with the network');
    }
    throw new HubError(`${id}@${revision} is not in the cache (${repoDir(cache, id)}) and HF_HUB_OFFLINE is set: `
      + 'run once with the network, or give the checkpoint\'s folder');
  }
  const hub = new Hub({ id, revision, env, cache });
  const snapshotFile = (file) => path.join(repoDir(cache, id), 'snapshots', hub.commit, file);
  try {
    await fetchModel(hub, { id, revision, lab, checkConfig, unreadArchitecture, snapshotFile });
  } catch (error) {
    // A name that reads as a Hub id may have been meant as a folder (the README's `--model bert-folder`):
    // with no Hub to ask, say that no such folder is here first.
    if (!error.unreachable) throw error;
    throw new HubError(`--model ${model.slice(0, 200)} is not a folder here, and as a Hub id: ${error.message}`);
  }
  if (!isCommit(revision)) {
    await mkdir(path.join(repoDir(cache, id), 'refs', path.dirname(revision)), { recursive: true });
    await writeFile(path.join(repoDir(cache, id), 'refs', revision), hub.commit);
  }
  return path.dirname(snapshotFile('config.json'));
}

/** The one Hub plan (hub_plan.js) driven against the Hub into the cache's snapshot of hub.commit. */
function fetchModel(hub, { id, revision, lab, checkConfig, unreadArchitecture, snapshotFile }) {
  return drivePlan(hubPlan({ id, revision, endpoint: hub.endpoint, lab, checkConfig, unreadArchitecture }), {
    // A file the snapshot already holds (config.json, just fetched) is sized on disk, as the page's client
    // sizes its kept copies: no second request for it.
    size: async (file) => (await stat(snapshotFile(file)).catch(() => null))?.size ?? hub.size(file),
    plan: () => {}, // each file's own progress line says its size
    fetch: (file) => hub.fetchFile(file),
    text: (file) => readFile(snapshotFile(file), 'utf8'),
  });
}
