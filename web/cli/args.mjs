// Command-line flags for `attnlab`: a small declarative parser that names the bad flag.
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';

export class UsageError extends Error {}

/**
 * A user's value as a message shows it: on one line (control characters escaped), at most about 40
 * characters; a path keeps its end (the file name), anything else its start.
 */
export function cut(value, { tail = false } = {}) {
  const text = String(value).replace(/[\x00-\x1f\x7f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
  const MAX = 40;
  if (text.length <= MAX) return text;
  return tail ? `…${text.slice(text.length - MAX + 1)}` : `${text.slice(0, MAX - 1)}…`;
}

/** The same, quoted. */
export const shown = (value, options) => `'${cut(value, options)}'`;

export const USAGE = `usage: attnlab train --task copy|reverse|pointer [options]
       attnlab train --lab lookup [--steps N] [--seed S] [--heads H] [--batch N] [--lr X] [--backend B] [--json]
                                  [--save FILE]
       attnlab labs

Trains a lab's model with the same C++ trainer as the page: the Alignment lab (course notebook 01,
the default; --task picks copy, reverse or pointer) or the Lookup lab (notebook 02: attention over a
database of 100 real MNIST digits; defaults: 9370 steps, heads 1, batch 64, lr 0.0001).

options:
  --lab L           alignment | lookup (default alignment)
  --task T          alignment: copy | reverse | pointer           (required for alignment)
  --unique-keys     pointer: draw keys as a permutation (no duplicates)
  --steps N         training steps (default: copy 200, reverse 250, pointer 350)
  --seed S          seed, 0..4294967295 (default 0); a seed reproduces a run bit for bit
  --backend B       auto | webgpu | simd | scalar (default auto)
  --build B         auto | simd-threads | simd | scalar: which WASM module to load (default auto:
                    simd-threads, the Node build that runs a step's two shards on two cores)
  --lr X            Adam learning rate (default 0.003)
  --heads H         attention heads (default 4)
  --d-model E       model width (default 32)
  --batch N         batch size (default 128)
  --no-positional   ablation: drop the input-position embeddings
  --every N         progress every N steps (default 25)
  --json            JSON lines instead of text
  --png FILE        write the head-mean attention heatmap of the fixed sample as PNG (2x, as the page
                    exports it; drawn in headless Chromium, else the bare cells and colour bar)
  --svg FILE        the same figure as SVG (needs Chromium)
  --save FILE       save the trained weights as safetensors (PyTorch's state_dict names)
                    (--png, --svg and --save are checked before training: the folder must exist)
  --load FILE       start from saved weights (the lab's or the course notebook's, see docs/weights.md);
                    a file whose metadata names another lab, task or head count is refused, not followed
  -h, --help        this text
  --version         the module version`;

// Each lab and the flags it takes (the rest are the Alignment lab's own).
export const LABS = {
  alignment: { notebook: '01_attention_principle', title: 'Alignment: copy, reverse, pointer' },
  lookup: { notebook: '02_attention_basics_mnist_lookup', title: 'Lookup: attention as a database query over real MNIST digits',
    flags: ['--lab', '--steps', '--seed', '--heads', '--batch', '--lr', '--backend', '--build', '--every', '--json', '--save'] },
};

const FLAGS = {
  '--lab': { key: 'lab', type: 'choice', choices: Object.keys(LABS) },
  '--task': { key: 'task', type: 'choice', choices: ['copy', 'reverse', 'pointer'] },
  '--unique-keys': { key: 'uniqueKeys', type: 'bool' },
  '--steps': { key: 'steps', type: 'int', min: 1, max: 100000 },
  '--seed': { key: 'seed', type: 'int', min: 0, max: 4294967295 },
  '--backend': { key: 'backend', type: 'choice', choices: ['auto', 'webgpu', 'simd', 'scalar'] },
  '--build': { key: 'build', type: 'choice', choices: ['auto', 'simd-threads', 'simd', 'scalar'] },
  '--lr': { key: 'lr', type: 'number', min: 1e-6, max: 1 },
  '--heads': { key: 'heads', type: 'int', min: 1, max: 16 },
  '--d-model': { key: 'dModel', type: 'int', min: 1, max: 256 },
  '--batch': { key: 'batch', type: 'int', min: 1, max: 1024 },
  '--no-positional': { key: 'noPositional', type: 'bool' },
  '--every': { key: 'every', type: 'int', min: 1, max: 100000 },
  '--json': { key: 'json', type: 'bool' },
  '--png': { key: 'png', type: 'string' },
  '--svg': { key: 'svg', type: 'string' },
  '--save': { key: 'save', type: 'string' },
  '--load': { key: 'load', type: 'string' },
};

// Written the way a person writes a number, so '0x10', '1e3' steps, '+5', ' 5', '5.0', 'Infinity' and
// 'NaN' are refused rather than read by Number() as something the user may not have meant.
const INTEGER = /^-?[0-9]+$/;
const DECIMAL = /^-?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?$/;

function parseNumber(name, spec, raw) {
  const int = spec.type === 'int';
  const value = (int ? INTEGER : DECIMAL).test(raw) ? Number(raw) : NaN;
  if (Number.isFinite(value) && value >= spec.min && value <= spec.max) return value;
  const form = Number.isNaN(value) ? (int ? ' (plain decimal digits)' : ' (plain decimal, e.g. 0.003 or 3e-3)') : '';
  throw new UsageError(`${name} must be ${int ? 'an integer' : 'a number'} in [${spec.min}, ${spec.max}], got ${shown(raw)}${form}`);
}

export function parseArgs(argv) {
  if (argv.includes('-h') || argv.includes('--help')) return { help: true };
  if (argv.includes('--version')) return { version: true };
  const [command, ...rest] = argv;
  if (command === 'labs' && rest.length === 0) return { labs: true };
  if (command !== 'train') throw new UsageError(command ? `unknown command ${shown(command)}` : 'missing command');
  const out = { backend: 'auto', build: 'auto', seed: 0, every: 25, json: false };
  for (let i = 0; i < rest.length; i++) {
    const [name, inline] = rest[i].split(/=(.*)/s, 2);
    const spec = FLAGS[name];
    if (!spec) throw new UsageError(`unknown flag ${shown(name)}`);
    if (spec.type === 'bool') {
      out[spec.key] = true;
      continue;
    }
    const raw = inline ?? rest[++i];
    if (raw === undefined || raw.startsWith('--')) throw new UsageError(`${name} needs a value`);
    if (spec.type === 'choice') {
      if (!spec.choices.includes(raw)) throw new UsageError(`${name} must be one of ${spec.choices.join(', ')}, got ${shown(raw)}`);
      out[spec.key] = raw;
    } else if (spec.type === 'string') {
      if (raw === '') throw new UsageError(`${name} needs a file name, got an empty one`);
      out[spec.key] = raw;
    } else {
      out[spec.key] = parseNumber(name, spec, raw);
    }
  }
  out.lab ??= 'alignment';
  const allowed = LABS[out.lab].flags;
  if (allowed) {
    const given = rest.filter((a) => a.startsWith('--')).map((a) => a.split('=')[0]);
    const foreign = given.find((flag) => !allowed.includes(flag));
    if (foreign) throw new UsageError(`${foreign} does not apply to --lab ${out.lab} (it takes ${allowed.join(' ')})`);
    return out;
  }
  if (!out.task) throw new UsageError('--task is required');
  if (out.uniqueKeys && out.task !== 'pointer') throw new UsageError('--unique-keys applies to --task pointer only');
  return out;
}

/** A file flag's path that cannot work: one line, exit 2, no usage text. */
export class FileError extends UsageError {}

/**
 * Checks every file flag before any training: outputs (--save, --png, --svg) must name a file, not a
 * folder, in a folder that exists and is writable, no two of them the same; --load a readable file.
 * Throws a FileError naming the flag and the path.
 */
export function checkFiles(args) {
  const fail = (flag, file, why) => { throw new FileError(`${flag} ${shown(file, { tail: true })}: ${why}`); };
  // Missing -> null; any other trouble (a name too long, a loop of links) is the user's to fix too.
  const statOf = (flag, file, target = file) => {
    try {
      return statSync(target);
    } catch (error) {
      if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return null;
      return fail(flag, file, `cannot use ${shown(target, { tail: true })} (${error.code ?? error.message})`);
    }
  };
  const can = (file, mode) => {
    try {
      accessSync(file, mode);
      return true;
    } catch {
      return false;
    }
  };
  const outputs = [['--save', args.save], ['--png', args.png], ['--svg', args.svg]].filter(([, file]) => file !== undefined);
  const seen = new Map();
  for (const [flag, file] of outputs) {
    const full = path.resolve(file);
    if (seen.has(full)) fail(flag, file, `${seen.get(full)} writes the same file`);
    seen.set(full, flag);
    const st = statOf(flag, file);
    if (st?.isDirectory()) fail(flag, file, 'is a folder; give a file name');
    if (st) {
      if (!can(file, constants.W_OK)) fail(flag, file, 'exists and cannot be overwritten (no write permission)');
      continue;
    }
    const dir = path.dirname(full);
    const dirSt = statOf(flag, file, dir);
    if (!dirSt) fail(flag, file, `the folder ${shown(dir, { tail: true })} does not exist`);
    if (!dirSt.isDirectory()) fail(flag, file, `${shown(dir, { tail: true })} is not a folder`);
    if (!can(dir, constants.W_OK | constants.X_OK)) fail(flag, file, `the folder ${shown(dir, { tail: true })} is not writable`);
  }
  if (args.load !== undefined) {
    const st = statOf('--load', args.load);
    if (!st) fail('--load', args.load, 'no such file');
    if (st.isDirectory()) fail('--load', args.load, 'is a folder, not a weights file');
    if (!can(args.load, constants.R_OK)) fail('--load', args.load, 'cannot be read (no read permission)');
  }
}
