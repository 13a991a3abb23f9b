// One source for every flag. A command's flags are properties: its lab's own (web/labs/*.js, the same
// names, ranges, defaults and help as the page's settings and the link's parameters) and the command's
// own options (--model, --json, --png, ...), declared in the same form in the lab's `command` block. This
// file turns such a table into flags, reads argv with it, and writes the --help lines from it, so the
// page, the link and the CLI cannot disagree. Pure functions, no I/O.
//
// A flag's spec: {key (the property's name), prop, type: 'int' | 'number' | 'choice' | 'bool' | 'text' |
//   'path' | 'heads', choices?, min?, max?, minExclusive?, maxLength? (text), value? (what a bool flag
//   sets), meta, help}. 'heads': layer.head[,layer.head...] (web/labs/head_list.js); whether they fit the
//   model is checked once it is open.
import { parseHeadList } from '../labs/head_list.js';
import { characterCount, parseProperty } from '../shared/properties.js';

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

const kebab = (name) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** A property's flag: --name in kebab case; a switch that is on by default is turned off by --no-name. */
export const flagOf = (prop) => (prop.type === 'bool' && prop.default === true ? `--no-${kebab(prop.name)}` : `--${kebab(prop.name)}`);

/** A property (a lab's, or a command's own option) -> its flag's spec. */
export function specOf(prop) {
  const spec = { key: prop.name, prop, help: prop.help, type: prop.type };
  if (prop.type === 'bool') return { ...spec, value: prop.default !== true };
  if (prop.type === 'choice') return { ...spec, choices: prop.choices.map((c) => String(c.value)) };
  if (prop.type === 'int' || prop.type === 'number') {
    return { ...spec, min: prop.min, max: prop.max, minExclusive: !!prop.minExclusive,
      meta: prop.meta ?? (prop.type === 'int' ? 'N' : 'X') };
  }
  if (prop.type === 'text') return { ...spec, maxLength: prop.maxLength, meta: prop.meta ?? '"..."' };
  if (prop.type === 'path') return { ...spec, meta: prop.meta ?? 'FILE' };
  if (prop.type === 'heads') return { ...spec, meta: prop.meta ?? 'L.H[,L.H...]' };
  if (prop.type === 'names') return { ...spec, meta: prop.meta ?? prop.names.join(',') };
  throw new Error(`property ${prop.name}: type ${prop.type} has no flag`);
}

/** properties -> {flag: spec}. */
export const flagsFrom = (properties) => Object.fromEntries(properties.map((p) => [flagOf(p), specOf(p)]));

// Written the way a person writes a number, so '0x10', '1e3' steps, '+5', ' 5', '5.0', 'Infinity' and
// 'NaN' are refused rather than read by Number() as something the user may not have meant.
const INTEGER = /^-?[0-9]+$/;
const DECIMAL = /^-?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?$/;

/** The range a number flag takes, as its messages and --help write it: [1, 16] or (0, 1]. */
export const rangeOf = (spec) => `${spec.minExclusive ? '(' : '['}${spec.min}, ${spec.max}]`;

/** flag name, spec, the text typed -> the value; throws a UsageError that names the flag and what it takes. */
export function parseValue(name, spec, raw) {
  if (spec.type === 'choice') {
    if (!spec.choices.includes(raw)) throw new UsageError(`${name} must be one of ${spec.choices.join(', ')}, `
      + `got ${shown(raw)}`);
    return spec.prop.choices.find((c) => String(c.value) === raw).value;
  }
  if (spec.type === 'path') {
    if (raw === '') throw new UsageError(`${name} needs a file name, got an empty one`);
    return raw;
  }
  if (spec.type === 'heads') {
    const parsed = parseHeadList(raw);
    if (parsed.error) throw new UsageError(`${name}: ${parsed.error}`);
    if (parsed.value === '') throw new UsageError(`${name} needs at least one head, as layer.head (e.g. 0.1)`);
    return parsed.value;
  }
  if (spec.type === 'names') {
    const parsed = parseProperty({ ...spec.prop, label: name }, raw);
    if (parsed.error) throw new UsageError(parsed.error);
    if (!parsed.value.length) throw new UsageError(`${name} needs at least one of ${spec.prop.names.join(', ')}`);
    return parsed.value;
  }
  if (spec.type === 'text') {
    if (raw.trim() === '') throw new UsageError(`${name} is empty`);
    const length = characterCount(raw);
    if (length > spec.maxLength) throw new UsageError(`${name} is ${length.toLocaleString('en')} characters long: at `
      + `most ${spec.maxLength.toLocaleString('en')}`);
    return raw;
  }
  const int = spec.type === 'int';
  const value = (int ? INTEGER : DECIMAL).test(raw) ? Number(raw) : NaN;
  const above = spec.minExclusive ? value > spec.min : value >= spec.min;
  if (Number.isFinite(value) && above && value <= spec.max) return value;
  const form = Number.isNaN(value) ? (int ? ' (plain decimal digits)' : ' (plain decimal, e.g. 0.003 or 3e-3)') : '';
  throw new UsageError(`${name} must be ${int ? 'an integer' : 'a number'} in ${rangeOf(spec)}, got `
    + `${shown(raw)}${form}`);
}

/**
 * argv -> {values: {key: value} (the defaults, then the flags), given: Set of keys set by a flag}.
 * `unknown(name)` says what to tell the user about a flag the table does not have.
 */
export function parseFlags(argv, flags, { defaults = {}, unknown = (name) => `unknown flag ${shown(name)}` } = {}) {
  const values = { ...defaults };
  const given = new Set();
  for (let i = 0; i < argv.length; i++) {
    const [name, inline] = argv[i].split(/=(.*)/s, 2);
    const spec = flags[name];
    if (!spec) throw new UsageError(unknown(name));
    let value;
    if (spec.type === 'bool') {
      if (inline !== undefined) throw new UsageError(`${name} is a switch: it takes no value, got ${shown(inline)}`);
      value = spec.value;
    } else {
      const raw = inline ?? argv[++i];
      // A value may start with '-' (a negative number, a sentence) when it is given as --flag=VALUE.
      if (raw === undefined || (inline === undefined && raw.startsWith('--'))) throw new UsageError(`${name} needs a value`);
      value = parseValue(name, spec, raw);
    }
    values[spec.key] = value;
    given.add(spec.key);
  }
  return { values, given };
}

/**
 * text in lines of at most `width`, later lines indented; `tail` ends it, never split (a pointer such as
 * "(attnlab translate --help)").
 */
export const wrap = (text, width, indent, tail = '') => {
  const words = [...text.split(/\s+/), ...(tail ? [tail] : [])];
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

/** What --help says a flag's default is, or '' (none). A switch says whether its setting is on. */
export function defaultText(spec) {
  const prop = spec.prop;
  if (!prop) return '';
  // A headless default that differs from the page's, said where it is declared (e.g. the checkpoint's own
  // num_beams, as generate() uses it).
  if (prop.cliDefault !== undefined) return prop.cliDefault;
  if (prop.defaultText !== undefined) return prop.defaultText;
  if (spec.type === 'bool') return prop.default ? 'on' : 'off';
  if (spec.type === 'text') return prop.default ? JSON.stringify(prop.default) : 'none';
  return prop.default === undefined ? '' : String(prop.default);
}

/** One flag's --help entry: the flag and what it takes, its help, its range and its default. */
export function flagLine(flag, spec) {
  const meta = spec.type === 'bool' ? '' : spec.type === 'choice' ? ` ${spec.choices.join('|')}` : ` ${spec.meta ?? 'X'}`;
  const left = `  ${flag}${meta}`;
  const notes = [];
  if (spec.prop?.required) notes.push('required');
  if (spec.type === 'int' || spec.type === 'number') notes.push(`range ${rangeOf(spec)}`);
  const def = defaultText(spec);
  if (def) notes.push(`default ${def}`);
  const text = `${spec.help ?? ''}${notes.length ? ` (${notes.join('; ')})` : ''}`;
  return `${left.length < 24 ? left.padEnd(24) : `${left}\n${' '.repeat(24)}`}${wrap(text.trim(), 76, 24)}`;
}
