// A lab's property table, as data: parse a property from text (a form field or a URL parameter),
// check it, and check the table as a whole. Pure functions, no DOM: the page's controls (web/ui/controls.js) and
// its URL state (web/ui/url_state.js) share them, so a value that the page accepts is one the URL accepts.
//
// A property: {name, type: 'int' | 'number' | 'choice' | 'bool' | 'names' | 'text' | 'heads', default, min?, max?,
//   minExclusive?, choices?: [{value, label}], names?: [string], maxLength? (text), slider? (a range
//   input for int and number), stepper? (an int field with − and + that apply at once), maxOf?
//   (a stepper's largest value for the open checkpoint: its summary -> a number), label, help,
//   effect: 'reset' | 'live' | 'view' | 'page', when?: (values) => bool}
//   'names' is a comma-separated list drawn from `names` (e.g. controls to hide; `item` says what one is,
//   'control' unless given).
//   'heads' is a list of heads as layer.head, numbered from 0 (web/labs/head_list.js; '' for none).
//   effect says what a change does: 'reset' rebuilds the model (it asks first), 'live' changes a running
//   session, 'view' only redraws, 'page' sets up the page around the lab (embed mode, theme).
// In web/shared/: pure (no DOM), and used by both the page (web/ui) and the CLI (web/cli), which import
// downward only: neither reaches into the other's folder for it.

import { parseHeadList } from '../labs/head_list.js';

const INTEGER = /^[+-]?\d+$/;
/** A decimal number as a person types it (no hex, no Infinity): shared with matrix_figure.js's cells. */
export const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/**
 * text -> {value} or {error}: the error names the property and says what it accepts. A 'names' list
 * with some unknown names gives both: the known names as the value, and an error naming the others.
 */
/**
 * A text's length as a person counts it: in characters (code points), not UTF-16 units, so 2,000 emoji
 * are 2,000, not 4,000 (issue 48). Counted without making an array of them.
 */
export function characterCount(text) {
  let n = text.length;
  for (let i = 0; i + 1 < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n -= 1;
        i += 1;
      }
    }
  }
  return n;
}

export function parseProperty(prop, text) {
  const raw = String(text ?? '').trim();
  if (prop.type === 'names') return parseNames(prop, raw);
  if (prop.type === 'heads') {
    const parsed = parseHeadList(raw);
    return parsed.error ? { error: `${prop.label}: ${parsed.error}` } : { value: parsed.value };
  }
  if (prop.type === 'text') {
    if (!raw) return prop.default === '' ? { value: '' } : { error: `${prop.label} is empty` }; // an empty default: optional
    const length = characterCount(raw);
    if (length > prop.maxLength) return { error: `${prop.label} is ${length.toLocaleString('en')} characters long: at `
      + `most ${prop.maxLength.toLocaleString('en')}` };
    const problem = prop.check?.(raw); // a text of a form (a student ID): '' or what is wrong with it
    if (problem) return { error: `${prop.label}: ${problem}` };
    return { value: raw };
  }
  if (prop.type === 'bool') {
    if (['true', '1', 'on', 'yes'].includes(raw.toLowerCase())) return { value: true };
    if (['false', '0', 'off', 'no'].includes(raw.toLowerCase())) return { value: false };
    return { error: `${prop.label} must be true or false, got '${raw}'` };
  }
  if (prop.type === 'choice') {
    const choice = prop.choices.find((c) => String(c.value) === raw);
    if (choice) return { value: choice.value };
    return { error: `${prop.label} must be one of ${prop.choices.map((c) => c.value).join(', ')}, got '${raw}'` };
  }
  if (raw === '') return { error: `${prop.label} is empty: enter a number` };
  if (prop.type === 'int' && !INTEGER.test(raw)) return { error: `${prop.label} must be a whole number, got '${raw}'` };
  if (prop.type === 'number' && !NUMBER.test(raw)) return { error: `${prop.label} must be a number, got '${raw}'` };
  return checkProperty(prop, Number(raw));
}

function parseNames(prop, raw) {
  const given = raw.split(',').map((n) => n.trim()).filter(Boolean);
  const known = given.filter((n) => prop.names.includes(n));
  const unknown = given.filter((n) => !prop.names.includes(n));
  if (!unknown.length) return { value: known };
  const quoted = unknown.map((n) => `'${n}'`).join(', ');
  return { value: known, error: `${prop.label}: no ${prop.item ?? 'control'} named ${quoted} (names: ${prop.names.join(', ')})` };
}

/** A value of the right type -> {value} or {error} for its range. */
export function checkProperty(prop, value) {
  if (prop.type === 'int' || prop.type === 'number') {
    if (!Number.isFinite(value)) return { error: `${prop.label} must be a finite number` };
    if (prop.type === 'int' && !Number.isInteger(value)) return { error: `${prop.label} must be a whole number` };
    const low = prop.minExclusive ? value <= prop.min : value < prop.min;
    if (prop.min !== undefined && low) {
      return { error: `${prop.label} must be ${prop.minExclusive ? 'above' : 'at least'} ${prop.min}, got ${value}` };
    }
    if (prop.max !== undefined && value > prop.max) return { error: `${prop.label} must be at most `
      + `${prop.max}, got ${value}` };
  }
  return { value };
}

export function defaultValues(properties) {
  return Object.fromEntries(properties.map((p) => [p.name, p.default]));
}

/** Whether a property applies to these values (pointer-only properties do not apply to copy). */
export function isRelevant(prop, values) {
  return !prop.when || prop.when(values);
}

/**
 * The lab's checks across properties (e.g. heads must divide d_model): [{name, message}] for the
 * relevant properties that fail.
 */
export function crossCheck(lab, values) {
  const problems = [];
  for (const check of lab.checks ?? []) {
    const problem = check(values);
    if (problem && isRelevant(lab.properties.find((p) => p.name === problem.name) ?? {}, values)) problems.push(problem);
  }
  return problems;
}

/** Names of the properties, among `names`, whose change rebuilds the model. */
export function resettingChanges(properties, before, after) {
  return properties.filter((p) => p.effect === 'reset' && before[p.name] !== after[p.name]).map((p) => p.name);
}
