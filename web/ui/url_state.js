// A lab's property table <-> the URL query, e.g. ?lab=alignment&task=copy&heads=4&seed=0&steps=200.
// Restoring never throws: an unknown or invalid parameter becomes a problem for the page to show, and
// the property keeps its default.
import { crossCheck, defaultValues, isRelevant, parseProperty } from './properties.js';

/** The query string (with '?') for these values: the lab id, then every property that applies. */
export function toQuery(lab, values) {
  const params = new URLSearchParams({ lab: lab.id });
  for (const prop of lab.properties) {
    if (isRelevant(prop, values)) params.set(prop.name, String(values[prop.name]));
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

/** search ('?a=1&b=2') -> {values, problems: [string]}; values always hold a valid value per property. */
export function fromQuery(lab, search) {
  const values = defaultValues(lab.properties);
  const problems = [];
  const byName = new Map(lab.properties.map((p) => [p.name, p]));
  for (const [name, text] of new URLSearchParams(search)) {
    if (name === 'lab') continue;
    const prop = byName.get(name);
    if (!prop) {
      problems.push(`Unknown parameter '${name}' was ignored.`);
      continue;
    }
    const parsed = parseProperty(prop, text);
    if (parsed.error) problems.push(`${parsed.error}; using the default ${prop.default}.`);
    else values[name] = parsed.value;
  }
  // What a change implies (a task brings its step count), unless the link says otherwise.
  const given = Object.fromEntries(Object.entries(values).filter(([name]) => new URLSearchParams(search).has(name)));
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
    return { values: defaultValues(lab.properties), problems };
  }
  return { values, problems };
}
