// A student's own fixed input for a build (issue 45, item 1b): the same tensors drawn with another
// multiplier, chosen from the student's ID and the build's name, so that copying the page's or a
// classmate's tensors does not pass `attnlab check --student ID`, while every student's input stays one
// short Python line with exact float32 values. Each plain pattern tensor of the input and the state_dict
// ((torch.arange(n) * mul % mod - shift) / scale, exact_tensors.js) gets a multiplier coprime to mod and
// other than the default's, so its values are the default's residues in another order (the same range:
// nothing overflows, no softmax saturates). Tensors written another way (integer ids, masks, literals, a
// copy or an expand of another) stay as they are: their Python lines tie them to the others.
import { pattern } from './exact_tensors.js';

/** A student ID as a course's roster writes one: 1 to 64 letters, digits and . _ @ + - (an email is one). */
export const STUDENT_ID = /^[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}$/;

/** '' when `id` is a student ID, else what is wrong with it (in words, for the page and the CLI). */
export function studentIdProblem(id) {
  return STUDENT_ID.test(String(id)) ? '' : `${JSON.stringify(String(id).slice(0, 80))} is not a student ID: 1 to 64 `
    + 'letters, digits and . _ @ + - (as a course\'s roster writes them), starting with a letter or digit';
}

// FNV-1a (32 bits) of a text: the same number on every machine, for the same ID.
function fnv1a(text) {
  let h = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) h = Math.imul(h ^ byte, 0x01000193) >>> 0;
  return h;
}

const gcd = (a, b) => (b === 0 ? a : gcd(b, a % b));

/** A plain pattern tensor (its Python line the one pattern() writes) redrawn for `key`, or the tensor itself. */
function redrawn(t, key) {
  const m = t.made;
  if (!m || t.integer) return t;
  const plain = pattern(t.shape, m);
  if (plain.python !== t.python) return t;  // written another way (an expand, a reshape of its own)
  const muls = [];
  for (let x = 1; x < m.mod; x++) if (x !== m.mul % m.mod && gcd(x, m.mod) === 1) muls.push(x);
  if (!muls.length) return t;  // mod 2: one multiplier only
  return pattern(t.shape, { ...m, mul: muls[fnv1a(key) % muls.length] });
}

const redrawAll = (table, prefix) => (table ? Object.fromEntries(Object.entries(table)
  .map(([name, t]) => [name, redrawn(t, `${prefix}\n${name}`)])) : table);

/** build (registry.js) -> the build with student `id`'s input and state_dict; `student` names whose it is. */
export function forStudent(build, id) {
  const problem = studentIdProblem(id);
  if (problem) throw new Error(problem);
  const seed = `${build.name}\n${id}`;
  return { ...build, student: id, input: redrawAll(build.input, `${seed}\ninput`),
    stateDict: redrawAll(build.stateDict, `${seed}\nstate_dict`) };
}
