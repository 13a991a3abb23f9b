// {kind: 'tensor', id, title, shape, values, integer?, extra? ({label, shape, values}: a second tensor beside it,
// make_batch's y), status? ('ok' | 'bad'), note?, hidden? (a page with answers=0: the values left out, said
// in words)}: a tensor printed as PyTorch prints it (4 decimals,
// rows on lines, nested brackets), under its title and shape, for a student to hold beside their
// notebook's print. A long tensor scrolls inside its box; nothing is left out.
import { el } from './el.js';

/**
 * values (flat, row-major) of `shape` -> PyTorch's print: tensor([[ 0.1234, -0.5000], ...]). integer: an
 * integer tensor (make_batch's X: "2"); a float tensor of whole numbers prints as PyTorch does ("1.").
 */
export function printTensor(values, shape, { integer = false } = {}) {
  const whole = Array.from(values).every((v) => Number.isInteger(v));
  const number = scientific(values) ? fourDigitsExponent : fourDecimals;
  const cell = (v) => (integer ? String(v) : whole ? `${v}.` : Number.isNaN(v) ? 'nan' : Number.isFinite(v) ? number(v) : v > 0 ? 'inf' : '-inf');
  const cells = Array.from(values, cell);
  const width = Math.max(...cells.map((c) => c.length), 1);
  let at = 0;
  const prefix = 'tensor(';
  const nest = (depth) => {
    if (depth === shape.length) return cells[at++].padStart(width);
    const parts = [];
    for (let i = 0; i < shape[depth]; i++) parts.push(nest(depth + 1));
    const indent = ' '.repeat(prefix.length + depth + 1);
    const between = depth === shape.length - 1 ? ', ' : `,${'\n'.repeat(shape.length - depth - 1)}${indent}`;
    return `[${parts.join(between)}]`;
  };
  return `${prefix}${shape.length ? nest(0) : cells[0]})`;
}

/**
 * v to 4 decimals as PyTorch prints it ('%.4f': an exact tie goes to the even digit, 0.03125 -> 0.0312),
 * where toFixed rounds a tie up (0.0313). Ties are common in the builds' exact inputs (multiples of 1/32).
 */
function fourDecimals(v) {
  const x = v * 10000;
  if (Math.abs(x) < 2 ** 40 && Math.abs(x - Math.trunc(x)) === 0.5) {
    const down = Math.trunc(x);
    const even = down % 2 === 0 ? down : down + Math.sign(x);
    return (even / 10000).toFixed(4).replace(/^0\.0000$/, v < 0 ? '-0.0000' : '0.0000');
  }
  return v.toFixed(4);
}

/**
 * Whether PyTorch prints these in scientific notation (torch/_tensor_str.py's _Formatter): when the
 * largest nonzero finite magnitude is more than 1,000 times the smallest, or more than 1e8. An attention
 * row of 0.4752 beside 0.0005 prints as 4.7518e-01 and 5.4859e-04.
 */
function scientific(values) {
  let most = 0, least = Infinity;
  for (const v of values) {
    const a = Math.abs(v);
    if (!Number.isFinite(a) || a === 0) continue;
    most = Math.max(most, a);
    least = Math.min(least, a);
  }
  return most > 0 && (most / least > 1000 || most > 1e8);
}

/** v as Python's '%.4e' (7.1543e-04: the exponent signed, two digits at least), where JS writes 7.1543e-4. */
function fourDigitsExponent(v) {
  const [mantissa, exponent] = v.toExponential(4).split('e');
  const e = Number(exponent);
  return `${mantissa}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
}

const shapeText = (shape) => `(${shape.join(', ')})`;

export const tensorKind = {
  create(view) {
    view.node = el('figure', { className: 'tensor-figure' });
  },
  show(view, f) {
    view.node.dataset.figure = f.id;
    view.node.dataset.status = f.status ?? '';
    const block = (label, shape, values, integer) => [
      el('figcaption', { className: 'tensor-title', textContent: `${label} · shape ${shapeText(shape)}` }),
      el('pre', { className: 'tensor-values', textContent: printTensor(values, shape, { integer }), tabIndex: 0 }),
    ];
    const parts = f.hidden ? [el('figcaption', { className: 'tensor-title', textContent: `${f.title} · shape `
      + `${shapeText(f.shape)}` }), el('p', { className: 'tensor-hidden', textContent: 'The lab\'s numbers are not '
      + 'shown on this page: paste or open yours above and Check says whether they are right.' })]
      : block(f.title, f.shape, f.values, f.integer);
    if (f.extra) parts.push(...block(f.extra.label, f.extra.shape, f.extra.values, f.extra.integer));
    if (f.note) parts.push(el('p', { className: 'tensor-note inline-message', textContent: f.note }));
    view.node.replaceChildren(...parts);
    view.node.dataset.shape = f.shape.join(',');
  },
};
