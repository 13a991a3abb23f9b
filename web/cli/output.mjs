// What a command prints, delivered whole. Node writes to a pipe asynchronously once the pipe's buffer
// (64 KB on Linux) is full, and process.exit() drops what it still holds: a grader reading `--json`
// through a pipe got 65,536 bytes of a 77,645-byte record. So a command writes through an Output,
// which waits for a slow reader (memory stays bounded however much a long run prints), and ends only
// after drain() has seen both streams empty. A reader that goes away (`| head -c 100`) closes the
// output: the next write throws OutputClosed, and the command unwinds quietly (exit 0, no trace).
import { escapeControls } from '../shared/quote_text.js';

export class OutputClosed extends Error {
  constructor() {
    super('the reader of the output went away');
    this.name = 'OutputClosed';
  }
}

// The longest line a message prints (a few sentences with their names and numbers); past it, cut.
export const MESSAGE_CHARS = 2000;

/** text -> the same lines (newlines kept), each with its controls escaped and cut at MESSAGE_CHARS characters. */
export function safeLines(text) {
  return String(text).split('\n').map((line) => {
    const chars = [...line];
    const shown = chars.length > MESSAGE_CHARS ? `${chars.slice(0, MESSAGE_CHARS).join('')}… (a line of `
      + `${chars.length.toLocaleString('en')} characters, cut)` : line;
    return escapeControls(shown, { keepTab: true });
  }).join('\n');
}

// The output could not be written (a full disk: issue 48 found exit 7 and the module's minified source
// printed as an 18-line trace): the command ends with one line on stderr, exit 1.
const CAUSES = { ENOSPC: 'no space left on the device', EDQUOT: 'the disk quota is used up',
  EFBIG: 'the file is too large', EIO: 'an input/output error' };
export class OutputFailed extends Error {
  constructor(streamName, error) {
    super(`cannot write to ${streamName}: ${CAUSES[error.code] ?? error.message} (${error.code ?? 'error'})`);
    this.name = 'OutputFailed';
  }
}

// A reader that went away: EPIPE on a pipe, ECONNRESET on a socket, or a stream already destroyed.
const GONE = new Set(['EPIPE', 'ECONNRESET', 'ERR_STREAM_DESTROYED']);

export class Output {
  constructor({ stdout = process.stdout, stderr = process.stderr } = {}) {
    this.stdout = stdout;
    this.stderr = stderr;
    this.closed = false;
    this.failures = new Map(); // stream -> its OutputFailed, once a write to it could not be done
    for (const stream of [stdout, stderr]) {
      stream.on('error', (error) => {
        // Never thrown from here: an exception in an event handler ends the process with a trace.
        if (GONE.has(error.code)) this.closed = true;
        else this.failed(stream, error);
      });
    }
  }

  /** A write to `stream` could not be done: its OutputFailed, kept (the first) so that it is said once. */
  failed(stream, error) {
    if (!this.failures.has(stream)) this.failures.set(stream,
      new OutputFailed(stream === this.stdout ? 'stdout' : 'stderr', error));
    return this.failures.get(stream);
  }

  /** Writes text to stdout; waits while the reader is behind. Throws OutputClosed once it has gone. */
  async out(text) {
    await this._write(this.stdout, text);
  }

  /**
   * The same on stderr (messages, warnings), each line made safe for a terminal: text from a file (a
   * template's raise_exception, a model_type, a tensor's name) reaches a message, so control characters
   * other than a tab are written as \xNN (no escape sequence reaches the terminal) and a line past
   * MESSAGE_CHARS is cut, saying how long it was (a 1 MB tensor name was printed whole).
   */
  async err(text) {
    await this._write(this.stderr, safeLines(text));
  }

  async _write(stream, text) {
    if (this.closed) throw new OutputClosed();
    if (this.failures.has(stream)) throw this.failures.get(stream);
    let written;
    try {
      written = stream.write(text); // a file's stream writes at once, and throws what the disk says
    } catch (error) {
      if (GONE.has(error.code)) {
        this.closed = true;
        throw new OutputClosed();
      }
      throw this.failed(stream, error);
    }
    if (written) return;
    // The stream holds more than its high-water mark: wait until the reader takes it (or leaves).
    await new Promise((resolve) => {
      const done = () => {
        stream.off('drain', done);
        stream.off('close', done);
        resolve();
      };
      stream.on('drain', done);
      stream.on('close', done);
    });
    if (this.closed) throw new OutputClosed();
  }

  /** Resolves once everything written to both streams has reached the OS (or the reader has gone). */
  async drain() {
    await Promise.all([this.stdout, this.stderr].map((stream) => new Promise((resolve) => {
      if (this.closed || this.failures.has(stream) || stream.destroyed || !stream.writable) return resolve();
      // An empty write's callback runs after every earlier write has been flushed, in order.
      try {
        stream.write('', () => resolve());
      } catch {
        resolve(); // a failing stream: its failure was kept, and is said once
      }
    })));
  }
}
