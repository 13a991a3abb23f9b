// Command-line flags for `attnlab`: a small declarative parser that names the bad flag.
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import { LABS } from '../labs/registry.js';

// The labs that train (a lab without a trainer, such as Scaled dot-product, has no `train` run).
const TRAINABLE = LABS.filter((lab) => lab.trainer);

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

// ---- flags: the generic ones here, each lab's from its property table (web/labs/*.js) ----

const kebab = (name) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** A property's flag: --name in kebab case; a switch that is on by default is turned off by --no-name. */
export const flagOf = (prop) => (prop.type === 'bool' && prop.default === true ? `--no-${kebab(prop.name)}` : `--${kebab(prop.name)}`);

/** The properties a lab takes on the command line (not the page's own: speed, colours, sections' views). */
export const cliProperties = (lab) => lab.properties.filter((p) => !p.page);

const GENERIC = {
  '--lab': { key: 'labId', type: 'choice', choices: TRAINABLE.map((l) => l.id), help: `which lab (default ${LABS[0].id})` },
  '--build': { key: 'build', type: 'choice', choices: ['auto', 'simd-threads', 'simd', 'scalar'],
    help: 'which WASM module to load (default auto: simd-threads, the Node build that runs a step\'s two shards on two cores)' },
  '--every': { key: 'every', type: 'int', min: 1, max: 100000, help: 'progress every N steps (default 25)', meta: 'N' },
  '--json': { key: 'json', type: 'bool', help: 'JSON lines instead of text' },
  '--save': { key: 'save', type: 'string', help: 'save the trained weights as safetensors (PyTorch\'s state_dict names)', meta: 'FILE' },
  '--load': { key: 'load', type: 'string', meta: 'FILE',
    help: 'start from saved weights (the lab\'s or the course notebook\'s, see docs/weights.md); a file whose metadata names another lab, task or head count is refused, not followed' },
};
// Only for labs whose key figure is a heatmap (lab.cli.heatmapFigure).
const FIGURE_FLAGS = {
  '--png': { key: 'png', type: 'string', meta: 'FILE',
    help: 'write the head-mean attention heatmap of the fixed sample as PNG (2x, as the page exports it; drawn in headless Chromium, else the bare cells and colour bar)' },
  '--svg': { key: 'svg', type: 'string', meta: 'FILE', help: 'the same figure as SVG (needs Chromium)' },
};

/** flag -> spec for one lab: its properties' flags, then the generic ones. */
export function flagsOf(lab) {
  const flags = {};
  for (const prop of cliProperties(lab)) {
    const spec = { key: prop.name, prop, help: prop.help };
    if (prop.type === 'bool') Object.assign(spec, { type: 'bool', value: prop.default !== true });
    else if (prop.type === 'choice') Object.assign(spec, { type: 'choice', choices: prop.choices.map((c) => String(c.value)) });
    else Object.assign(spec, { type: prop.type === 'int' ? 'int' : 'number', min: prop.min, max: prop.max, minExclusive: !!prop.minExclusive, meta: prop.type === 'int' ? 'N' : 'X' });
    flags[flagOf(prop)] = spec;
  }
  Object.assign(flags, GENERIC);
  if (lab.cli?.heatmapFigure) Object.assign(flags, FIGURE_FLAGS);
  return flags;
}

export const wrap = (text, width, indent) => {
  const words = text.split(/\s+/);
  const lines = [];
  let line = '';
  for (const w of words) {
    if (line && line.length + 1 + w.length > width) {
      lines.push(line);
      line = w;
    } else line = line ? `${line} ${w}` : w;
  }
  if (line) lines.push(line);
  return lines.join(`\n${' '.repeat(indent)}`);
};

function flagLine(flag, spec, prop) {
  const meta = spec.type === 'bool' ? '' : spec.type === 'choice' ? ` ${spec.choices.join('|')}` : ` ${spec.meta ?? 'X'}`;
  const left = `  ${flag}${meta}`;
  const def = prop && prop.type !== 'bool' ? ` (default ${prop.defaultText ?? prop.default})` : '';
  const text = `${spec.help ?? ''}${def}`;
  return `${left.length < 24 ? left.padEnd(24) : `${left}\n${' '.repeat(24)}`}${wrap(text, 76, 24)}`;
}

/** The help text, from the registry: one section per lab, with its flags. */
function usage() {
  const commands = LABS.filter((lab) => lab.command).map((lab) => lab.command);
  const lines = ['usage: attnlab train [--lab LAB] [options]', '       attnlab labs',
    ...commands.map((c) => `       ${c.synopsis}`), '',
    ...commands.map((c) => `${wrap(`attnlab ${c.name}: ${c.about} (attnlab ${c.name} --help)`, 100, 0)}`), '',
    'Trains a lab\'s model with the same C++ trainer as the page. Every lab\'s options come from its',
    'settings on the page (web/labs/); a flag of another lab is refused.', ''];
  for (const lab of TRAINABLE) {
    const first = lab === LABS[0] ? ' (the default)' : '';
    lines.push(`--lab ${lab.id}${first}: ${lab.title}, course notebook ${lab.notebook}`);
    lines.push(`  ${wrap(lab.summary, 96, 2)}`);
    const required = lab.cli?.required ?? [];
    if (required.length) lines.push(`  required: ${required.map((n) => flagOf(lab.properties.find((p) => p.name === n))).join(' ')}`);
    for (const prop of cliProperties(lab)) lines.push(flagLine(flagOf(prop), flagsOf(lab)[flagOf(prop)], prop));
    if (lab.cli?.heatmapFigure) for (const [flag, spec] of Object.entries(FIGURE_FLAGS)) lines.push(flagLine(flag, spec));
    lines.push('');
  }
  lines.push('every lab:');
  for (const [flag, spec] of Object.entries(GENERIC)) lines.push(flagLine(flag, spec));
  lines.push('  (--png, --svg and --save are checked before training: the folder must exist)');
  lines.push(flagLine('-h, --help', { type: 'bool', help: 'this text' }));
  lines.push(flagLine('--version', { type: 'bool', help: 'the module version' }));
  return lines.join('\n');
}

export const USAGE = usage();

/** What a checkpoint command prints: its record as JSON (--json) or its text lines, then each figure it wrote. */
export function reportLines({ record, lines, figures }, json) {
  return json ? [JSON.stringify(record), ...figures.map((f) => JSON.stringify({ figure: f }))] : [...lines, ...figures];
}

// Written the way a person writes a number, so '0x10', '1e3' steps, '+5', ' 5', '5.0', 'Infinity' and
// 'NaN' are refused rather than read by Number() as something the user may not have meant.
const INTEGER = /^-?[0-9]+$/;
const DECIMAL = /^-?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?$/;

function parseNumber(name, spec, raw) {
  const int = spec.type === 'int';
  const value = (int ? INTEGER : DECIMAL).test(raw) ? Number(raw) : NaN;
  const above = spec.minExclusive ? value > spec.min : value >= spec.min;
  if (Number.isFinite(value) && above && value <= spec.max) return value;
  const form = Number.isNaN(value) ? (int ? ' (plain decimal digits)' : ' (plain decimal, e.g. 0.003 or 3e-3)') : '';
  const range = `${spec.minExclusive ? '(' : '['}${spec.min}, ${spec.max}]`;
  throw new UsageError(`${name} must be ${int ? 'an integer' : 'a number'} in ${range}, got ${shown(raw)}${form}`);
}

/**
 * argv -> {lab, values (the lab's property values: its defaults and the flags), given (names set by a
 * flag), backend, build, seed, every, json, save, load, png, svg} or {help} / {version} / {labs}.
 */
export function parseArgs(argv) {
  if (argv.includes('-h') || argv.includes('--help')) return { help: true };
  if (argv.includes('--version')) return { version: true };
  const [command, ...rest] = argv;
  if (command === 'labs' && rest.length === 0) return { labs: true };
  if (command !== 'train') throw new UsageError(command ? `unknown command ${shown(command)}` : 'missing command');
  // The lab first: it decides which flags exist.
  let labId = LABS[0].id;
  rest.forEach((arg, i) => {
    const [name, inline] = arg.split(/=(.*)/s, 2);
    if (name === '--lab') labId = inline ?? rest[i + 1];
  });
  if (labId === undefined || labId.startsWith('--')) throw new UsageError('--lab needs a value');
  const lab = TRAINABLE.find((l) => l.id === labId);
  const viewer = LABS.find((l) => l.id === labId && !l.trainer);
  if (viewer) throw new UsageError(`--lab ${viewer.id}: the ${viewer.title} lab trains nothing${viewer.command ? `; its headless side is \`${viewer.command.synopsis}\`` : ''}`);
  if (!lab) throw new UsageError(`--lab must be one of ${TRAINABLE.map((l) => l.id).join(', ')}, got ${shown(labId)}`);
  const flags = flagsOf(lab);
  const out = { lab, build: 'auto', every: 25, json: false, values: defaultsOf(lab), given: new Set() };
  for (let i = 0; i < rest.length; i++) {
    const [name, inline] = rest[i].split(/=(.*)/s, 2);
    const spec = flags[name];
    if (!spec) {
      const elsewhere = TRAINABLE.some((other) => other !== lab && flagsOf(other)[name]);
      throw new UsageError(elsewhere ? `${name} does not apply to --lab ${lab.id} (it takes ${Object.keys(flags).join(' ')})` : `unknown flag ${shown(name)}`);
    }
    let value;
    if (spec.type === 'bool') value = spec.value ?? true;
    else {
      const raw = inline ?? rest[++i];
      if (raw === undefined || raw.startsWith('--')) throw new UsageError(`${name} needs a value`);
      if (spec.type === 'choice') {
        if (!spec.choices.includes(raw)) throw new UsageError(`${name} must be one of ${spec.choices.join(', ')}, got ${shown(raw)}`);
        value = raw;
      } else if (spec.type === 'string') {
        if (raw === '') throw new UsageError(`${name} needs a file name, got an empty one`);
        value = raw;
      } else value = parseNumber(name, spec, raw);
    }
    if (spec.prop) {
      out.values[spec.key] = value;
      out.given.add(spec.key);
    } else out[spec.key] = value;
  }
  for (const name of lab.cli?.required ?? []) {
    if (!out.given.has(name)) throw new UsageError(`${flagOf(lab.properties.find((p) => p.name === name))} is required`);
  }
  // What a choice implies (a task brings its step count), unless the flag was given too.
  for (const name of out.given) {
    const implied = lab.afterChange(name, out.values);
    for (const [k, v] of Object.entries(implied)) if (!out.given.has(k)) out.values[k] = v;
  }
  // A flag that only some settings use (--unique-keys is for the pointer task) is refused elsewhere.
  for (const name of out.given) {
    const prop = lab.properties.find((p) => p.name === name);
    if (prop.when && !prop.when(out.values)) throw new UsageError(`${flagOf(prop)} ${prop.whenText ?? 'does not apply to these settings'}`);
  }
  out.backend = out.values.backend ?? 'auto';
  out.seed = out.values.seed ?? 0;
  out.steps = out.given.has('steps') ? out.values.steps : undefined;
  return out;
}

function defaultsOf(lab) {
  return Object.fromEntries(lab.properties.map((p) => [p.name, p.default]));
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
