// Build `simple-attention`: notebook 04_intro_to_attention's SimpleAttention, step by step, on a fixed
// query, key and value (the notebook's sizes: 1 sequence of 5 tokens, embedding_dim 4) with a causal mask.
//   scores   QKᵀ / √4, the notebook's first line             (1, 5, 5)
//   masked   scores.masked_fill(mask == 0, float('-inf'))    (1, 5, 5)
//   weights  F.softmax(masked, dim=-1)                       (1, 5, 5)
//   output   weights @ value                                 (1, 5, 4)
import { causalMask, pattern } from './exact_tensors.js';
import { maskFill, matmul, matmulTransposed, softmaxRows } from './plain_math.js';

const B = 1, T = 5, D = 4;

export const simpleAttentionBuild = {
  name: 'simple-attention',
  lab: 'scaled',
  notebook: '04_intro_to_attention',
  module: 'SimpleAttention',
  title: 'SimpleAttention (notebook 04)',
  input: {
    query: pattern([B, T, D], { mul: 7, mod: 13, shift: 6, scale: 4 }),
    key: pattern([B, T, D], { mul: 5, mod: 11, shift: 5, scale: 4 }),
    value: pattern([B, T, D], { mul: 3, mod: 10, shift: 4, scale: 2 }),
    mask: causalMask(T),
  },
  stateDict: null,
  model: ['import math  # the notebook\'s SimpleAttention calls math.sqrt, and the notebook never imports math',
    `attention = SimpleAttention(${D})`,
    'output, attention_weights = attention(query, key, value, mask)'],
  notes: ['The notebook never imports math: SimpleAttention(4) fails with NameError: name \'math\' is not defined '
    + 'until you run import math.',
    'The mask is 1 where a query may look (on and below the diagonal): masked_fill(mask == 0, ...) puts -inf above it, '
      + 'and softmax gives those keys weight 0.'],
  hint: 'Did you give your module this query, key, value and mask?',
  steps: [
    { name: 'scores', code: 'torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(4)', shape: [B, T, T] },
    { name: 'masked', code: 'scores.masked_fill(mask == 0, float(\'-inf\'))', shape: [B, T, T] },
    { name: 'weights', code: 'F.softmax(scores, dim=-1)', shape: [B, T, T] },
    { name: 'output', code: 'torch.matmul(attention_weights, value)', shape: [B, T, D] },
  ],
  compute(x) {
    const scores = matmulTransposed(x.query.data, x.key.data, B, T, T, D, 1 / Math.sqrt(D));
    const masked = maskFill(scores, x.mask.data, B, T, T);
    const weights = softmaxRows(masked, T);
    return { scores, masked, weights, output: matmul(weights, x.value.data, B, T, T, D) };
  },
};
