// A tokenizer.json's own regular expressions, run under a deadline (issue 48, item 3). A Split
// pre-tokenizer's or a Replace step's "Regex" is the file's, and JavaScript's regex engine backtracks: a
// pattern like (\w+\s?)+$ takes longer than the age of the universe on an ordinary sentence, and nothing
// can interrupt a regex running on one's own thread. So before the tokenizers library runs such a
// pattern on a text, the same pattern runs on the same text in a small worker thread while this thread
// waits (Atomics.wait on shared memory, the only wait that needs no event loop). If the worker finishes
// within REGEX_LIMITS.deadlineMs the library then runs the very same work here, which is known to end;
// if not, the worker is ended (a regex can be interrupted from outside its thread) and the text is refused
// in one sentence naming the file's field. A real pattern (GPT-2's, Llama 3's, Qwen 2's) takes
// microseconds on the 2,000 characters a field holds, so the deadline is far from every real use.
//
// Where it runs: Node (worker_threads, through process.getBuiltinModule, so this file imports no Node
// API) and a page's worker when the page is cross-origin isolated (SharedArrayBuffer; public/sw.js makes
// the hosted page so). On a page that is not isolated (an embed in slides, the single file) no thread can
// wait for another: there the patterns are probed once, when the tokenizer opens, on PROBE_TEXTS (long runs
// of each kind of character, where backtracking explodes) in a worker with the same deadline, and a
// pattern that passes runs unwatched afterwards. docs/reliability.md says so.
//
// The worker's side is the string WORKER_SOURCE, so a Blob URL (a page) or eval (Node) starts it with
// nothing to fetch: offline and in the single file alike.

export const REGEX_LIMITS = { deadlineMs: 2000, startMs: 15000, characters: 1 << 20, patternCharacters: 1 << 16 };

// Long runs of one kind of character, and of two kinds mixed, each ended by each kind: nested or
// overlapping quantifiers ((a+)+, (\w|\d)*, (\s*\w+)*) backtrack on such a run when the end does not match.
const RUNS = ['a', 'A', '1', ' ', '\n', '.', '\'', '_', 'é', '中', '😀', 'ab', 'a ', 'a1', 'a.', ' .'];
const ENDS = ['', '!', ' ', 'a', '1', '\n', '\0'];
const run = (unit, length, end) => ({ text: unit.repeat(Math.ceil(length / unit.length)) + end,
  said: `${Math.ceil(length / unit.length) * [...unit].length + [...end].length} characters (${JSON.stringify(unit)} `
    + `repeated${end ? `, then ${JSON.stringify(end)}` : ''})` });
const PROBES = [
  { text: 'The quick brown fox jumps over the lazy dog. It\'s 3:45 pm, and we\'ve 12,000 words to write!',
    said: 'an ordinary sentence' },
  ...RUNS.flatMap((unit) => ENDS.map((end) => run(unit, 48, end))),
  ...[' ', 'a', 'a ', '1'].map((unit) => run(unit, 2000, '!')),
];
export const PROBE_TEXTS = PROBES.map((p) => p.text);

export class PatternError extends Error {
  constructor(message) {
    super(message);
    this.name = 'PatternError';
  }
}

/** The deadline passed: the pattern backtracks on that text. Said as "took more than 2 s on ..." with its field. */
class DeadlinePassed extends PatternError {}

// The shared block: four Int32 (state, source length, flags length, text length) and then the three
// strings as UTF-16 units. state: 0 idle, 1 a job is written, 2 the worker started it, 3 done.
const HEADER = 16;
const IDLE = 0, POSTED = 1, STARTED = 2, DONE = 3;

// Run by the worker: wait for a job, read the pattern and the text, run the pattern over the whole text
// (matchAll scans it as match, split and replace do: every match from left to right), say done.
const WORKER_SOURCE = `
const port = typeof require === 'function' ? require('node:worker_threads').parentPort : self;
const listen = (f) => (port.on ? port.on('message', f) : (port.onmessage = (e) => f(e.data)));
port.postMessage({ alive: true });
const scan = (source, flags, text) => {
  for (const m of text.matchAll(new RegExp(source, flags.includes('g') ? flags : flags + 'g'))) void m;
};
listen((message) => {
  if (message.probe) {
    const { source, flags, texts } = message.probe;
    texts.forEach((text, i) => { scan(source, flags, text); port.postMessage({ probed: i }); });
    return;
  }
  if (!message.shared) return;
  const state = new Int32Array(message.shared, 0, 4), units = new Uint16Array(message.shared, ${HEADER});
  const read = (from, n) => {
    let s = '';
    for (let i = from; i < from + n; i += 8192) s += String.fromCharCode.apply(null, units.subarray(i, Math.min(from + n, i + 8192)));
    return s;
  };
  port.postMessage({ ready: true });
  for (;;) {
    // Sleep until a job is posted (a store of ${IDLE} after a job wakes nobody; the post notifies).
    for (let now; (now = Atomics.load(state, 0)) !== ${POSTED};) Atomics.wait(state, 0, now);
    const sourceLength = state[1], flagsLength = state[2], textLength = state[3];
    const source = read(0, sourceLength), flags = read(sourceLength, flagsLength);
    const text = read(sourceLength + flagsLength, textLength);
    Atomics.store(state, 0, ${STARTED});
    Atomics.notify(state, 0);
    scan(source, flags, text);
    Atomics.store(state, 0, ${DONE});
    Atomics.notify(state, 0);
  }
});
`;

const nodeWorkers = () => globalThis.process?.getBuiltinModule?.('node:worker_threads') ?? null;
/** Whether this thread can wait for another: shared memory and a wait allowed here (not a page's main thread). */
const canWait = () => typeof SharedArrayBuffer === 'function' && typeof Atomics?.wait === 'function'
  && (nodeWorkers() !== null || (globalThis.crossOriginIsolated === true && typeof globalThis.WorkerGlobalScope === 'function'));

function startWorker() {
  const node = nodeWorkers();
  if (node) {
    const worker = new node.Worker(WORKER_SOURCE, { eval: true,
      resourceLimits: { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 32 } });
    const listeners = new Set();
    worker.on('message', (data) => listeners.forEach((f) => f(data)));
    worker.on('error', () => {}); // out of memory in a regex: the waiting side reports the deadline
    worker.unref(); // after the listeners (a 'message' listener refs the port): the watcher never keeps Node running
    return { post: (m) => worker.postMessage(m), listen: (f) => listeners.add(f), end: () => worker.terminate() };
  }
  if (typeof globalThis.Worker !== 'function' || typeof Blob !== 'function') return null;
  const url = URL.createObjectURL(new Blob([WORKER_SOURCE], { type: 'text/javascript' }));
  const worker = new Worker(url);
  const listeners = new Set();
  worker.onmessage = (e) => listeners.forEach((f) => f(e.data));
  return { post: (m) => worker.postMessage(m), listen: (f) => listeners.add(f),
    onError: (f) => worker.addEventListener('error', f),
    end: () => { worker.terminate(); URL.revokeObjectURL(url); } };
}

/** The one watcher of this thread: a worker that runs each pattern first, while this thread waits. */
class Watcher {
  constructor() {
    this.worker = null;
    this.ready = null; // a promise while a page's worker starts
    this.shared = null;
  }

  /**
   * Starts the worker (a page's must be running before a wait: it cannot start while its parent waits).
   * -> whether it runs; a page's that has not started within REGEX_LIMITS.startMs is given up.
   */
  async start() {
    if (!this.worker) this.launch();
    if (nodeWorkers() || !this.ready) return true; // Node's needs no wait (an unref'd worker would not keep Node up for one)
    let timer;
    const late = new Promise((resolve) => { timer = setTimeout(() => resolve(false), REGEX_LIMITS.startMs); });
    const started = await Promise.race([this.ready.then(() => true), late]);
    clearTimeout(timer);
    if (!started) {
      this.worker.end();
      this.worker = null;
    }
    return started;
  }

  launch() {
    this.shared = new SharedArrayBuffer(HEADER + 2 * (REGEX_LIMITS.characters + 2 * REGEX_LIMITS.patternCharacters));
    this.state = new Int32Array(this.shared, 0, 4);
    this.units = new Uint16Array(this.shared, HEADER);
    this.worker = startWorker();
    const worker = this.worker;
    this.ready = new Promise((resolve) => worker.listen((m) => {
      if (m?.ready && this.worker === worker) this.ready = null;
      if (m?.ready) resolve();
    }));
    worker.post({ shared: this.shared });
  }

  /**
   * Runs source/flags over text in the worker first; past the deadline throws DeadlinePassed ("took more
   * than 2 s on " + said), and a PatternError when the watcher cannot check it now.
   */
  check(source, flags, text, said = `a text of ${text.length.toLocaleString('en')} characters`) {
    // Node's worker starts while this thread waits; a page's cannot, so it is started when the tokenizer
    // opens (watchPatterns) and again after a deadline passes (in the background: the next text waits).
    if (!this.worker) {
      this.launch();
      if (!nodeWorkers()) throw new PatternError('its patterns\' watcher is starting again after the last refusal: try once more');
    }
    if (this.ready && !nodeWorkers()) throw new PatternError('its patterns\' watcher is still starting: try once more');
    const units = this.units;
    let at = 0;
    for (const s of [source, flags, text]) for (let i = 0; i < s.length; i++) units[at++] = s.charCodeAt(i);
    this.state[1] = source.length;
    this.state[2] = flags.length;
    this.state[3] = text.length;
    Atomics.store(this.state, 0, POSTED);
    Atomics.notify(this.state, 0);
    // Wait for the worker to start the job (a busy machine may be slow to wake it), then for the job.
    const started = Atomics.wait(this.state, 0, POSTED, REGEX_LIMITS.startMs) !== 'timed-out'
      || Atomics.load(this.state, 0) !== POSTED;
    const done = started && (Atomics.load(this.state, 0) === DONE
      || Atomics.wait(this.state, 0, STARTED, REGEX_LIMITS.deadlineMs) !== 'timed-out'
      || Atomics.load(this.state, 0) === DONE);
    if (done) {
      Atomics.store(this.state, 0, IDLE);
      return;
    }
    this.worker.end();
    this.worker = null;
    if (!nodeWorkers()) this.launch();
    if (!started) throw new PatternError(`could not be checked: its watcher did not start within ${REGEX_LIMITS.startMs / 1000} s`);
    throw new DeadlinePassed(`took more than ${REGEX_LIMITS.deadlineMs / 1000} s on ${said}`);
  }

  /**
   * The same runs without a wait (a page that is not isolated): all the texts, one after another, in a
   * worker of their own, each under the deadline. Resolves, or rejects naming the text it was on.
   */
  probe(source, flags, texts) {
    let worker = null;
    try {
      worker = startWorker();
    } catch {
      worker = null; // a page from file: may not start one
    }
    if (!worker) return Promise.resolve(); // nothing here can watch (docs/reliability.md)
    return new Promise((resolve, reject) => {
      let next = 0, timer = null;
      const arm = (ms, late) => {
        clearTimeout(timer);
        timer = setTimeout(late, ms);
      };
      const tooLong = () => {
        worker.end();
        reject(new DeadlinePassed(`took more than ${REGEX_LIMITS.deadlineMs / 1000} s on ${describeProbe(texts[next])}`));
      };
      // A worker that never starts (a host's policy) cannot watch: the patterns then run unwatched, as
      // where no worker can be made; only a worker that started and then ran past the deadline refuses.
      const unwatched = () => { worker.end(); resolve(); };
      worker.listen((m) => {
        if (m?.alive) return arm(REGEX_LIMITS.deadlineMs, tooLong);
        if (m?.probed !== next) return;
        if (++next < texts.length) return arm(REGEX_LIMITS.deadlineMs, tooLong);
        clearTimeout(timer);
        worker.end();
        resolve();
      });
      worker.onError?.(unwatched);
      arm(REGEX_LIMITS.startMs, unwatched);
      worker.post({ probe: { source, flags, texts } });
    });
  }
}

let watcher = null;
const theWatcher = () => (watcher ??= new Watcher());

/** A probe text in words: "an ordinary sentence", "48 characters ("a" repeated, then "!")". */
const describeProbe = (text) => PROBES.find((p) => p.text === text)?.said ?? `a text of ${text.length} characters`;

/**
 * A RegExp that runs itself in the watcher first. The library calls text.match/matchAll/split/replaceAll
 * with it; each comes here through the matching Symbol method. Internal copies (split makes one) are
 * plain RegExps: Symbol.species.
 */
class WatchedRegExp extends RegExp {
  static get [Symbol.species]() { return RegExp; }

  watch(text) {
    const s = String(text);
    if (s.length > REGEX_LIMITS.characters) {
      throw new PatternError(`${this.where} is run on at most ${REGEX_LIMITS.characters.toLocaleString('en')} `
        + `characters; this text has ${s.length.toLocaleString('en')}`);
    }
    try {
      theWatcher().check(this.source, this.flags, s);
    } catch (error) {
      if (!(error instanceof PatternError)) throw error;
      throw new PatternError(`${this.where} ${error.message}${error instanceof DeadlinePassed ? ': a pattern that '
        + 'backtracks without bound' : ''}; the text was not tokenized`);
    }
  }

  [Symbol.match](text) { this.watch(text); return super[Symbol.match](text); }

  [Symbol.matchAll](text) { this.watch(text); return super[Symbol.matchAll](text); }

  [Symbol.split](text, limit) { this.watch(text); return super[Symbol.split](text, limit); }

  [Symbol.replace](text, replacement) { this.watch(text); return super[Symbol.replace](text, replacement); }
}

const cut = (s, n) => (s.length > n ? `${s.slice(0, n)}... (${s.length.toLocaleString('en')} characters)` : s);

/**
 * The library's components that hold a pattern from the file's "Regex" (a normalizer's or pre-tokenizer's
 * Replace, a Split, a decoder's Replace), each with where it is in the file: [{part, where}].
 */
function regexParts(hf, file) {
  const found = [];
  const walk = (part, field, depth) => {
    // The library's parts are callable objects (functions), a Sequence's in its normalizers, tokenizers or decoders.
    if (!part || !['object', 'function'].includes(typeof part) || depth > 6) return;
    for (const inner of [part.normalizers, part.tokenizers, part.decoders]) {
      if (Array.isArray(inner)) inner.forEach((p) => walk(p, field, depth + 1));
    }
    const regex = part.config?.pattern?.Regex;
    if (typeof regex === 'string' && part.pattern instanceof RegExp) {
      found.push({ part, where: `${file}: its ${field}'s ${part.config.type ?? 'step'} pattern `
        + `${JSON.stringify(cut(regex, 80))}` });
    }
  };
  walk(hf.normalizer, 'normalizer', 0);
  walk(hf.pre_tokenizer, 'pre_tokenizer', 0);
  walk(hf.decoder, 'decoder', 0);
  return found;
}

/**
 * Puts every pattern the file wrote under the watcher (hf: the library's Tokenizer), and probes each
 * once on PROBE_TEXTS. -> the number of patterns watched. Throws a PatternError naming the field when a
 * pattern passes the deadline on a probe, or is longer than REGEX_LIMITS.patternCharacters.
 */
export async function watchPatterns(hf, file = 'tokenizer.json') {
  const parts = regexParts(hf, file);
  if (!parts.length) return 0;
  for (const { part, where } of parts) {
    if (part.pattern.source.length + part.pattern.flags.length > REGEX_LIMITS.patternCharacters) {
      throw new PatternError(`${where} is longer than the ${REGEX_LIMITS.patternCharacters.toLocaleString('en')} `
        + 'characters a pattern may have');
    }
  }
  const waiting = canWait() && await theWatcher().start();
  if (waiting) {
    for (const entry of parts) {
      const watched = new WatchedRegExp(entry.part.pattern.source, entry.part.pattern.flags);
      watched.where = entry.where;
      entry.part.pattern = watched;
    }
  }
  for (const { part, where } of parts) {
    const { source, flags } = part.pattern;
    try {
      if (!waiting) await theWatcher().probe(source, flags, PROBE_TEXTS);
      else for (const probe of PROBES) theWatcher().check(source, flags, probe.text, probe.said);
    } catch (error) {
      if (!(error instanceof PatternError)) throw error;
      throw new PatternError(`${where} ${error.message}${error instanceof DeadlinePassed ? ': a pattern that '
        + 'backtracks without bound' : ''}`);
    }
  }
  return parts.length;
}
