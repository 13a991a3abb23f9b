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
  if (text.length > MAX_TEXT) throw new PrintedTensorError(`the pasted text is ${text.length} characters; at most ${MAX_TEXT} are read`);
  if (/\.\.\./.test(text)) {
    throw new PrintedTensorError('the print is abbreviated ("..."): PyTorch leaves numbers out of a large tensor. Print it with '
      + 'torch.set_printoptions(profile="full") first, or save it with torch.save(t, "step.pt") and open that file.');
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
      at = text.indexOf('(', at) + 1;
      const scalar = text.slice(at).match(/^\s*([^,\s)[\]]+)/);
      if (scalar && !text.slice(at).trimStart().startsWith('[')) {
        // tensor(0.5000) or tensor(3): a 0-d tensor.
        const value = numberOf(scalar[1], text, at);
        tensors.push({ shape: [], data: Float64Array.of(value) });
        at += scalar[0].length;
        continue;
      }
    }
    const { value, end } = readList(text, text.indexOf('[', at), 0);
    const shape = shapeOf(value, []);
    const data = new Float64Array(shape.reduce((a, b) => a * b, 1));
    total += data.length;
    if (total > MAX_NUMBERS) throw new PrintedTensorError(`more than ${MAX_NUMBERS} numbers were pasted; save a large tensor with torch.save and open the file`);
    flatten(value, data, 0);
    tensors.push({ shape, data });
    at = end;
  }
  if (!tensors.length) throw new PrintedTensorError('no tensor found: paste what print(t) showed, e.g. tensor([[0.1, 0.2], [0.3, 0.4]])');
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
  if (!Number.isFinite(x) && !/inf/i.test(word)) throw new PrintedTensorError(`"${word.slice(0, 20)}" at character ${at + 1} is not a number`);
  return x;
}

/** Nested arrays -> their shape, checking that every row at a depth has the same length. */
function shapeOf(value, path) {
  if (!Array.isArray(value)) return [];
  if (value.length === 0) return [0];
  const inner = shapeOf(value[0], [...path, 0]);
  value.forEach((item, i) => {
    const other = shapeOf(item, [...path, i]);
    if (Array.isArray(item) !== Array.isArray(value[0]) || other.join() !== inner.join()) {
      throw new PrintedTensorError(`row [${[...path, i].join(', ')}] has shape (${other.join(', ')}), row [${[...path, 0].join(', ')}] has (${inner.join(', ')}): the rows of a tensor have one length`);
    }
  });
  return [value.length, ...inner];
}

function flatten(value, out, at) {
  if (!Array.isArray(value)) {
    out[at] = value;
    return at + 1;
  }
  for (const item of value) at = flatten(item, out, at);
  return at;
}
