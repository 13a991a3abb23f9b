// Build `self-attention`: notebook 03_self_attention's SelfAttention in eval mode, with the weights of
// its state_dict below, on a fixed x (the notebook's sizes: 1 sentence of 6 tokens, hidden_dim 8) and a
// causal mask (batch, seq_len, seq_len) as its docstring says.
//   Q, K, V    query(x), key(x), value(x)                          (1, 6, 8)
//   energy     Q Kᵀ / √8, then masked_fill(mask == 0, -inf)        (1, 6, 6)
//   attention  softmax(energy, dim=-1); dropout is off in eval()   (1, 6, 6)
//   output     attention @ V                                       (1, 6, 8)
import { causalMask, pattern } from './exact_tensors.js';
import { linear, maskFill, matmul, matmulTransposed, softmaxRows } from './plain_math.js';

const B = 1, T = 6, E = 8;
const weight = (mul, mod) => pattern([E, E], { mul, mod, shift: (mod - 1) / 2, scale: 16 });
const bias = (mul, mod) => pattern([E], { mul, mod, shift: (mod - 1) / 2, scale: 16 });

export const selfAttentionBuild = {
  name: 'self-attention',
  lab: 'scaled',
  notebook: '03_self_attention',
  module: 'SelfAttention',
  title: 'SelfAttention (notebook 03)',
  input: {
    x: pattern([B, T, E], { mul: 7, mod: 13, shift: 6, scale: 4 }),
    mask: { ...causalMask(T), shape: [B, T, T], python: `torch.tril(torch.ones(${T}, `
      + `${T})).reshape(${B}, ${T}, ${T})` },
  },
  stateDict: {
    'query.weight': weight(5, 11), 'query.bias': bias(3, 7),
    'key.weight': weight(7, 17), 'key.bias': bias(5, 9),
    'value.weight': weight(3, 13), 'value.bias': bias(2, 5),
  },
  model: [`self_attention = SelfAttention(input_dim=${E})`,
    'self_attention.load_state_dict(state_dict)',
    'self_attention.eval()  # dropout off: the notebook never calls eval(), so its own figure has dropout on',
    'output, attention_weights = self_attention(x, mask)'],
  notes: ['Call eval() first. SelfAttention drops 10% of the attention weights (nn.Dropout(0.1)) in train mode, and '
    + 'scales the rest by 1/0.9; a new module is in train mode, and the notebook never calls eval(), so its own '
    + 'heatmap changes from run to run. In eval mode dropout does nothing.',
  'energy here is what softmax gets: after masked_fill, so -inf above the diagonal (a print before the mask '
    + 'has numbers there).'],
  hint: 'Did your module load this state_dict, run in eval mode, and get this x and mask?',
  steps: [
    { name: 'Q', code: 'self.query(x)', shape: [B, T, E] },
    { name: 'K', code: 'self.key(x)', shape: [B, T, E] },
    { name: 'V', code: 'self.value(x)', shape: [B, T, E] },
    { name: 'energy', code: 'torch.matmul(Q, K.transpose(-2, -1)) / self.scale, masked', shape: [B, T, T] },
    { name: 'attention', code: 'self.dropout(F.softmax(energy, dim=-1))', shape: [B, T, T] },
    { name: 'output', code: 'torch.matmul(attention_weights, V)', shape: [B, T, E] },
  ],
  compute(x, p) {
    const project = (name) => linear(x.x.data, B * T, E, p[`${name}.weight`], p[`${name}.bias`], E);
    const Q = project('query'), K = project('key'), V = project('value');
    const energy = maskFill(matmulTransposed(Q, K, B, T, T, E, 1 / Math.sqrt(E)), x.mask.data, B, T, T);
    const attention = softmaxRows(energy, T);
    return { Q, K, V, energy, attention, output: matmul(attention, V, B, T, T, E) };
  },
};
