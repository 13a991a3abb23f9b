// Judges a student's answer to a question that takes one (issue 39, item 3): a choice, a number or a
// shape. No DOM: the page (questions.js) and the Node tests call the same functions. A question's `ask`:
//   {kind: 'choice', prompt, choices: [{label, right?: true, why}]}        each choice says why
//   {kind: 'number', prompt, expected, tolerance?, right, wrong, near?: [{value, why}]}
//   {kind: 'shape',  prompt, expected: [sizes], right, wrong, near?: [{shape, why}]}
// `near` names the wrong answers a student is likely to give, each with its own reason; any other
// wrong answer gets `wrong`. Text that cannot be read is not judged: the message says what was read.

// What a student typed is quoted back cut to this many characters.
const QUOTE_CHARS = 40;
const quote = (text) => {
  const t = String(text).trim();
  return `“${t.length > QUOTE_CHARS ? `${t.slice(0, QUOTE_CHARS - 1)}…` : t}”`;
};

/** A shape as Python prints a tuple: (4, 1, 1, 100), (5,) for one size. */
export function shapeText(shape) {
  return shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
}

/**
 * Reads a shape the ways a student writes one: "(4, 1, 1, 100)", "4,1,1,100", "[4, 1, 1, 100]",
 * "torch.Size([4, 1, 1, 100])", "4 x 1 x 1 x 100", "4×1×1×100", "(5,)". -> {shape} or {error}, the
 * error saying what was read before the part that could not be.
 */
export function readShape(text) {
  const given = String(text ?? '').trim();
  if (!given) return { error: 'Nothing to read: write the sizes separated by commas, e.g. (4, 10, 5).' };
  let body = given.replace(/^(torch\.)?Size\s*/i, '').trim();
  // Brackets around the whole (one or two pairs: torch.Size([...])), never inside.
  for (let i = 0; i < 2 && /^[([{]/.test(body) && /[)\]}]$/.test(body); i += 1) body = body.slice(1, -1).trim();
  // Separators: commas, ×, *, spaces, and an x between two sizes (4x10); an x elsewhere is not one.
  const parts = body.split(/\s*[,×*]\s*|(?<=\d)\s*[xX]\s*(?=\d)|\s+/);
  if (parts.at(-1) === '' && parts.length > 1) parts.pop(); // a trailing comma: (5,)
  const sizes = [];
  for (const part of parts) {
    if (!/^\d{1,9}$/.test(part)) {
      const read = sizes.length ? `read ${sizes.join(', ')}, then ` : '';
      const what = part === '' ? 'an empty place between separators' : `${quote(part)}, which is not a whole number`;
      return { error: `Could not read a shape from ${quote(given)}: ${read}${what}. Write the sizes separated by `
        + 'commas, e.g. (4, 10, 5).' };
    }
    sizes.push(Number(part));
  }
  return { shape: sizes };
}

/**
 * Reads a number: "0.1", ".5", "1e-4", "10%" (0.1), "1/10", "1,000" (thousands), "0,5" (a decimal
 * comma). -> {value, read} (read: how it was understood, when that is not the text itself) or {error}.
 */
export function readNumber(text) {
  const given = String(text ?? '').trim();
  if (!given) return { error: 'Nothing to read: write a number, e.g. 0.25.' };
  const plain = given.replace(/\s+/g, '');
  const number = /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i;
  let value = null;
  let read = null;
  if (number.test(plain)) value = Number(plain);
  else if (/^[-+]?\d{1,3}(,\d{3})+$/.test(plain)) { value = Number(plain.replaceAll(',', '')); read = String(value); }
  else if (/^[-+]?\d+,\d+$/.test(plain)) { value = Number(plain.replace(',', '.')); read = String(value); }
  else if (/%$/.test(plain) && number.test(plain.slice(0, -1))) { value = Number(plain.slice(0, -1)) / 100; read = String(value); }
  else {
    const fraction = plain.match(/^([-+]?\d+)\/(\d+)$/);
    if (fraction && Number(fraction[2]) !== 0) { value = Number(fraction[1]) / Number(fraction[2]); read = String(value); }
  }
  if (value === null || !Number.isFinite(value)) {
    return { error: `Could not read a number from ${quote(given)}: write it with digits, e.g. 0.25, `
      + '1e-4, 10% or 1/10.' };
  }
  return { value, read };
}

/**
 * Judges an answer: `given` is the index of the chosen choice (choice) or the typed text (number,
 * shape). -> {status: 'right' | 'wrong' | 'unread', text}: the sentence the student reads, which
 * repeats what was read and says why it is right or wrong.
 */
export function judgeAnswer(ask, given) {
  if (ask.kind === 'choice') {
    const choice = Number.isInteger(given) ? ask.choices[given] : undefined;
    if (!choice) return { status: 'unread', text: 'Choose one of the answers first.' };
    return choice.right
      ? { status: 'right', text: `Right: ${choice.label}. ${choice.why}` }
      : { status: 'wrong', text: `Not quite: ${choice.label}. ${choice.why}` };
  }
  if (ask.kind === 'number') {
    const { value, read, error } = readNumber(given);
    if (error) return { status: 'unread', text: error };
    const shown = read ? `${String(given).trim()} (read as ${read})` : String(value);
    const tolerance = ask.tolerance ?? 0;
    if (Math.abs(value - ask.expected) <= tolerance) return { status: 'right', text: `Right: ${shown}. ${ask.right}` };
    const near = ask.near?.find((n) => Math.abs(n.value - value) <= tolerance);
    return { status: 'wrong', text: `Not quite: ${shown}. ${near?.why ?? ask.wrong}` };
  }
  if (ask.kind === 'shape') {
    const { shape, error } = readShape(given);
    if (error) return { status: 'unread', text: error };
    const same = (a, b) => a.length === b.length && a.every((n, i) => n === b[i]);
    if (same(shape, ask.expected)) return { status: 'right', text: `Right: ${shapeText(shape)}. ${ask.right}` };
    const near = ask.near?.find((n) => same(n.shape, shape));
    return { status: 'wrong', text: `Not quite: ${shapeText(shape)}. ${near?.why ?? ask.wrong}` };
  }
  throw new Error(`unknown kind of question: ${ask.kind}`);
}
