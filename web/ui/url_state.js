// A lab's state table <-> the URL query, e.g. ?lab=alignment&task=copy&heads=4&seed=0&steps=200&embed=1.
// The table is the lab's properties plus the page's (page_properties.js: embed, autoplay, controls,
// theme, hide). Restoring never throws: an unknown or invalid parameter becomes a problem for the page
// to show, and the property keeps its default.
import { crossCheck, defaultValues, isRelevant, parseProperty } from '../shared/properties.js';
import { isPageDefault, pageProperties, pageText } from './page_properties.js';

/** Every property a link of this lab can carry. */
function stateTable(lab) {
  return [...lab.properties, ...pageProperties(lab)];
}

/**
 * The query string (with '?') for these values: the lab id, every lab property that applies, and the
 * page properties that are not at their defaults (so an ordinary link stays short).
 */
export function toQuery(lab, values) {
  const params = new URLSearchParams({ lab: lab.id });
  for (const prop of lab.properties) {
    // No heads switched off (heads '') says nothing: an ordinary link stays as it was.
    if (prop.type === 'heads' && !values[prop.name]) continue;
    if (isRelevant(prop, values)) params.set(prop.name, String(values[prop.name]));
  }
  for (const prop of pageProperties(lab)) {
    if (prop.name in values && !isPageDefault(prop, values[prop.name])) params.set(prop.name,
      pageText(prop, values[prop.name]));
  }
  return `?${params}`;
}

/** The page's address with this query (the path is kept, so any sub-path works). */
export function linkFor(location, lab, values) {
  return `${location.origin}${location.pathname}${toQuery(lab, values)}`;
}

/** Which lab a query asks for (undefined when it names none). */
export function labIdOf(search) {
  return new URLSearchParams(search).get('lab') ?? undefined;
}

// What a link says is echoed in notices cut to this many characters (one link made a 22,700-pixel notice).
export const ECHO_CHARS = 40;

/** A user's text as a notice quotes it: at most ECHO_CHARS characters, control characters shown escaped. */
export function echo(text) {
  const plain = String(text).replace(/[\u0000-\u001f\u007f]/g,
    (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
  return plain.length > ECHO_CHARS ? `${plain.slice(0, ECHO_CHARS - 1)}…` : plain;
}

// A link is read up to this many parameters and characters (a lab has a few dozen settings; the longest
// real value is a pasted text): past them, one notice, and the rest is not read. A link of 100,000 unknown
// parameters blocked the page for 56 s and wrote a 4 MB notice.
export const MAX_LINK_PARAMETERS = 200;
export const MAX_LINK_CHARS = 200000;
// Unknown parameters named one by one, at most this many; the others are counted in one notice.
const UNKNOWN_NAMED = 5;

/** search -> [[name, [values]]] in the order of first mention, in one pass, and what was cut. */
function linkParameters(search) {
  const text = String(search ?? '');
  const cutChars = text.length > MAX_LINK_CHARS;
  const params = new URLSearchParams(cutChars ? text.slice(0, MAX_LINK_CHARS) : text);
  const byName = new Map();
  let count = 0, cutParameters = false;
  for (const [name, value] of params) {
    if (++count > MAX_LINK_PARAMETERS) {
      cutParameters = true;
      break;
    }
    if (!byName.has(name)) byName.set(name, []);
    byName.get(name).push(value);
  }
  return { byName, cutChars, cutParameters, length: text.length };
}

/**
 * search ('?a=1&b=2') -> {values, problems: [string]}; values always hold a valid value per property.
 * A parameter given twice: the last value wins, and a problem says so.
 */
export function fromQuery(lab, search) {
  const table = stateTable(lab);
  const values = defaultValues(table);
  const problems = [];
  const byName = new Map(table.map((p) => [p.name, p]));
  const link = linkParameters(search);
  if (link.cutChars) problems.push(`The link is ${link.length.toLocaleString('en')} characters long: only its first `
    + `${MAX_LINK_CHARS.toLocaleString('en')} were read.`);
  if (link.cutParameters) problems.push(`The link has more than ${MAX_LINK_PARAMETERS} parameters: only the first `
    + `${MAX_LINK_PARAMETERS} were read.`);
  const unknown = [];
  for (const [name, all] of link.byName) { // a renamed setting appended below is visited too
    if (name === 'lab') continue;
    const text = all.at(-1);
    const prop = byName.get(name);
    // A setting a lab has renamed (lab.renamedLinks: {old: (text) -> {new: text}}): an older link, in
    // a slide deck, still opens the view it was made for.
    const renamed = lab.renamedLinks?.[name];
    if (!prop && renamed) {
      for (const [to, value] of Object.entries(renamed(text))) if (!link.byName.has(to)) link.byName.set(to, [value]);
      continue;
    }
    if (!prop) {
      unknown.push(name);
      if (unknown.length <= UNKNOWN_NAMED) problems.push(`Unknown parameter '${echo(name)}' was ignored.`);
      continue;
    }
    if (all.length > 1) problems.push(`'${echo(name)}' is given ${all.length} times; the last one counts `
      + `(${echo(text)}).`);
    const parsed = parseProperty(prop, text);
    const error = parsed.error && text.length > ECHO_CHARS ? parsed.error.replaceAll(text, echo(text)) : parsed.error;
    // A list with some unknown names keeps the known ones; anything else invalid keeps the default.
    if (error && 'value' in parsed) problems.push(`${error}; ignoring those.`);
    else if (error) problems.push(`${error}; using the default ${prop.default === '' ? '(none)' : prop.default}.`);
    if ('value' in parsed) values[name] = parsed.value;
  }
  if (unknown.length > UNKNOWN_NAMED) problems.push(`${(unknown.length - UNKNOWN_NAMED).toLocaleString('en')} more `
    + 'unknown parameters were ignored.');
  // What a change implies (a task brings its step count), unless the link says otherwise.
  const given = Object.fromEntries(Object.entries(values).filter(([name]) => link.byName.has(name)));
  let implied = values;
  for (const name of Object.keys(given)) implied = lab.afterChange?.(name, implied) ?? implied;
  Object.assign(values, implied, given);
  // Values that are fine alone but not together (heads=5 with d_model=32) go back to their defaults.
  for (const { name, message } of crossCheck(lab, values)) {
    problems.push(`${message}; using the default ${name} = ${byName.get(name).default}.`);
    values[name] = byName.get(name).default;
  }
  if (crossCheck(lab, values).length) {
    problems.push('The link\'s settings do not fit together; using all defaults.');
    return { values: defaultValues(table), problems };
  }
  return { values, problems };
}
