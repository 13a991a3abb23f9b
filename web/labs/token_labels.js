// Token labels for the figures of the labs that read a checkpoint (Pretrained, Translation): a token that
// occurs more than once gets its position as a subscript, so the axes and the lines stay unambiguous.

const SUBSCRIPTS = '₀₁₂₃₄₅₆₇₈₉';
const subscript = (n) => String(n).split('').map((d) => SUBSCRIPTS[Number(d)]).join('');

/** Token labels; a token that occurs more than once gets its position ("the₁", "the₇"). */
export function tokenLabels(tokens) {
  const count = new Map();
  for (const t of tokens) count.set(t, (count.get(t) ?? 0) + 1);
  return tokens.map((t, i) => (count.get(t) > 1 ? `${t}${subscript(i)}` : t));
}
