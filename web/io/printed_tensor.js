// A tensor as a notebook printed it, pasted by a student: PyTorch's print(t) ("tensor([[0.1234, -0.5],
// [...]], grad_fn=<...>)"), NumPy's ("[[0.1234 -0.5 ]\n [...]]") or a Python list. -> [{shape, data}], one
// per tensor in the text (print(X, y) gives two). The numbers are read as written: PyTorch prints 4
// decimals by default, so a comparison allows for that (web/labs/03_count_build.js).
//
// Refused with a message that names the problem: an abbreviated print ("..."), rows of different
// lengths, a word where a number belongs, unbalanced brackets, more than MAX_NUMBERS numbers.

export const MAX_NUMBERS = 100000;
const MAX_TEXT = 2 * 1024 * 1024;

export class PrintedTensorError extends Error {}

// One token of the text: a bracket, a number (nan, inf, -inf and exponents included) or the end of the
// tensor's numbers (a keyword such as grad_fn=, dtype=, device=, requires_grad=).
const NUMBER = /^[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|nan|inf)/;

/** text -> [{shape: [..], data: Float64Array}]; throws PrintedTensorError. */
export function parsePrintedTensors(text) {
  if (typeof text !== 'string') throw new PrintedTensorError('the pasted text must be a string');
  if (text.length > MAX_TEXT) throw new PrintedTensorError(`the pasted text is ${text.length} characters; at most `
    + `${MAX_TEXT} are read`);
  if (/\.\.\./.test(text)) {
    throw new PrintedTensorError('the print is abbreviated ("..."): PyTorch leaves numbers out of a large tensor. '
      + 'Print it with torch.set_printoptions(profile="full") first, or save it with torch.save(t, "step.pt") '
      + 'and open that file.');
  }
  const tensors = [];
  let at = 0;
  let total = 0;
  while (at < text.length) {
    // The next tensor starts at "tensor(" or at a bracket; anything else between tensors is skipped
    // (the ", " of print(X, y), the notebook's own words around them).
    const start = text.slice(at).search(/tensor\(|array\(|\[/);
    if (start < 0) break;
    at += start;
    if (text.startsWith('tensor(', at) || text.startsWith('array(', at)) {
      const opened = at;
      at = text.indexOf('(', at) + 1;
      while (at < text.length && /\s/.test(text[at])) at++;
      if (text[at] !== '[') {
        // tensor(0.5000) or tensor(3): a 0-d tensor. Anything else inside the parentheses holds no
        // numbers ("tensor()", "array( )"): refused here, since reading on from the next "[" would
        // take a bracket of the words around it (and "]tensor()" would be read again and again).
        const scalar = text.slice(at).match(/^([^,\s)[\]]+)/);
        if (!scalar) throw new PrintedTensorError(`"${text.slice(opened, opened + 20).trimEnd()}" at character `
          + `${opened + 1} holds no numbers`);
        tensors.push({ shape: [], data: Float64Array.of(numberOf(scalar[1], text, at)) });
        at += scalar[0].length;
        continue;
      }
    }
    const { value, end } = readList(text, text.indexOf('[', at), 0);
    const shape = shapeOf(value);
    const data = new Float64Array(shape.reduce((a, b) => a * b, 1));
    total += data.length;
    if (total > MAX_NUMBERS) throw new PrintedTensorError(`more than ${MAX_NUMBERS} numbers were pasted; save a large `
      + 'tensor with torch.save and open the file');
    flatten(value, data, 0);
    tensors.push({ shape, data });
    at = end;
  }
  if (!tensors.length) throw new PrintedTensorError('no tensor found: paste what print(t) showed, e.g. tensor([[0.1, '
    + '0.2], [0.3, 0.4]])');
  return tensors;
}

/** The list opened at text[at] === '[' -> {value (nested arrays of numbers), end (just past its ']')}. */
function readList(text, at, depth) {
  if (depth > 16) throw new PrintedTensorError('more than 16 nested brackets: not a tensor a notebook prints');
  const items = [];
  let i = at + 1;
  for (;;) {
    while (i < text.length && /[\s,]/.test(text[i])) i++;
    if (i >= text.length) throw new PrintedTensorError(`a "[" at character ${at + 1} is never closed`);
    const c = text[i];
    if (c === ']') return { value: items, end: i + 1 };
    if (c === '[') {
      const inner = readList(text, i, depth + 1);
      items.push(inner.value);
      i = inner.end;
      continue;
    }
    const match = text.slice(i, i + 64).match(NUMBER);
    if (!match) {
      const word = text.slice(i).match(/^[^\s,\]]+/)?.[0] ?? text[i];
      throw new PrintedTensorError(`"${word.slice(0, 20)}" at character ${i + 1} is not a number`);
    }
    items.push(numberOf(match[0], text, i));
    i += match[0].length;
  }
}

function numberOf(word, text, at) {
  const lower = word.toLowerCase();
  if (lower === 'nan' || lower === '+nan' || lower === '-nan') return NaN;
  if (lower === 'inf' || lower === '+inf') return Infinity;
  if (lower === '-inf') return -Infinity;
  const x = Number(word);
  if (!Number.isFinite(x) && !/inf/i.test(word)) throw new PrintedTensorError(`"${word.slice(0, 20)}" at character `
    + `${at + 1} is not a number`);
  return x;
}

/**
 * Nested arrays -> their shape: the lengths along the first item at each depth, then one walk over every
 * item that checks each row against them (linear in the number of items and brackets).
 */
function shapeOf(value) {
  const shape = [];
  for (let v = value; Array.isArray(v); v = v[0]) {
    shape.push(v.length);
    if (!v.length) break;
  }
  checkRows(value, shape, []);
  return shape;
}

function checkRows(value, shape, path) {
  const depth = path.length;
  const expected = shape.slice(depth);
  const row = (p) => `[${p.join(', ')}]`;
  const mismatch = (item, i) => {
    const other = [];
    for (let v = item; Array.isArray(v); v = v[0]) {
      other.push(v.length);
      if (!v.length) break;
    }
    throw new PrintedTensorError(`row ${row([...path, i])} has shape (${other.join(', ')}), row ${row([...path, 0])} `
      + `has (${expected.slice(1).join(', ')}): the rows of a tensor have one length`);
  };
  if (!Array.isArray(value)) return;
  for (let i = 0; i < value.length; i++) {
    const item = value[i];
    const inner = expected.length > 1;
    if (Array.isArray(item) !== inner || (inner && item.length !== expected[1])) mismatch(item, i);
    if (inner) checkRows(item, shape, [...path, i]);
  }
}

function flatten(value, out, at) {
  if (!Array.isArray(value)) {
    out[at] = value;
    return at + 1;
  }
  for (const item of value) at = flatten(item, out, at);
  return at;
}
