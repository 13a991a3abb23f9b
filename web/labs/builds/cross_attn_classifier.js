// Build `cross-attn-seq-classifier`: notebook 01_attention_principle's CrossAttnSeqClassifier on the copy
// task (value tokens = key tokens, out_len = the input's length), with the weights of its state_dict
// below: vocab 10, d_model 8, 2 heads (head dim 4), sequences of 6, a batch of 2.
//   K, V      tok_emb(tokens) + in_pos_emb(positions)                          (2, 6, 8)
//   Q         out_pos_emb(positions), one row per output position              (2, 6, 8)
//   q_heads   Q's in-projection, split into heads: (B, T, H, D).transpose(1, 2) (2, 2, 6, 4)
//   k_heads, v_heads  likewise from K and V                                   (2, 2, 6, 4)
//   weights   attn_w: softmax(q kᵀ / √4) per head (average_attn_weights=False) (2, 2, 6, 6)
//   logits    out(attention output)                                          (2, 6, 10)
import { idPattern, pattern } from './exact_tensors.js';
import { embed, linear, multiheadAttention } from './plain_math.js';

const B = 2, T = 6, E = 8, H = 2, D = E / H, VOCAB = 10;
const table = (rows, mul, mod) => pattern([rows, E], { mul, mod, shift: (mod - 1) / 2, scale: 8 });

export const crossAttnClassifierBuild = {
  name: 'cross-attn-seq-classifier',
  lab: 'alignment',
  notebook: '01_attention_principle',
  module: 'CrossAttnSeqClassifier',
  title: 'CrossAttnSeqClassifier (notebook 01)',
  input: {
    // Tokens 1..9, as make_batch's torch.randint(1, V, ...) gives them.
    key_tokens: idPattern([B, T], { mul: 7, mod: 9, offset: 1 }),
    value_tokens: { ...idPattern([B, T], { mul: 7, mod: 9, offset: 1 }),
      python: 'key_tokens  # the copy task: values = keys' },
  },
  stateDict: {
    'tok_emb.weight': table(VOCAB, 7, 17),
    'in_pos_emb.weight': table(T, 5, 11),
    'out_pos_emb.weight': table(T, 3, 13),
    'attn.in_proj_weight': pattern([3 * E, E], { mul: 5, mod: 19, shift: 9, scale: 16 }),
    'attn.in_proj_bias': pattern([3 * E], { mul: 3, mod: 7, shift: 3, scale: 16 }),
    'attn.out_proj.weight': pattern([E, E], { mul: 7, mod: 11, shift: 5, scale: 8 }),
    'attn.out_proj.bias': pattern([E], { mul: 2, mod: 5, shift: 2, scale: 8 }),
    'out.weight': pattern([VOCAB, E], { mul: 3, mod: 17, shift: 8, scale: 8 }),
    'out.bias': pattern([VOCAB], { mul: 5, mod: 7, shift: 3, scale: 16 }),
  },
  model: [`model = CrossAttnSeqClassifier(vocab_size=${VOCAB}, d_model=${E}, num_heads=${H}, max_in_len=${T}, `
    + `max_out_len=${T})`,
    'model.load_state_dict(state_dict)',
    'model.eval()',
    `logits, attn_w = model(key_tokens, value_tokens, ${T})`,
    '# The steps inside forward() and nn.MultiheadAttention, to print or save:',
    `in_pos = out_pos = torch.arange(${T})`,
    'K = model.tok_emb(key_tokens) + model.in_pos_emb(in_pos)[None, :, :]',
    'V = model.tok_emb(value_tokens) + model.in_pos_emb(in_pos)[None, :, :]',
    `Q = model.out_pos_emb(out_pos)[None, :, :].expand(${B}, -1, -1)`,
    'W_q, W_k, W_v = model.attn.in_proj_weight.chunk(3)',
    'b_q, b_k, b_v = model.attn.in_proj_bias.chunk(3)',
    `q_heads = (Q @ W_q.T + b_q).reshape(${B}, ${T}, ${H}, ${D}).transpose(1, 2)`,
    `k_heads = (K @ W_k.T + b_k).reshape(${B}, ${T}, ${H}, ${D}).transpose(1, 2)`,
    `v_heads = (V @ W_v.T + b_v).reshape(${B}, ${T}, ${H}, ${D}).transpose(1, 2)`],
  notes: ['nn.MultiheadAttention keeps its per-head queries, keys and values inside: the lines above make them from '
    + 'in_proj_weight (it divides the queries by √4 itself, after this step).'],
  hint: 'Did your model load this state_dict and get these key_tokens, value_tokens and out_len?',
  steps: [
    { name: 'K', code: 'tok_emb(key_tokens) + in_pos_emb(in_pos)[None, :, :]', shape: [B, T, E] },
    { name: 'V', code: 'tok_emb(value_tokens) + in_pos_emb(in_pos)[None, :, :]', shape: [B, T, E] },
    { name: 'Q', code: 'out_pos_emb(out_pos)[None, :, :].expand(B, -1, -1)', shape: [B, T, E] },
    { name: 'q_heads', code: '(Q @ W_q.T + b_q).reshape(B, T, H, D).transpose(1, 2)', shape: [B, H, T, D] },
    { name: 'k_heads', code: '(K @ W_k.T + b_k).reshape(B, S, H, D).transpose(1, 2)', shape: [B, H, T, D] },
    { name: 'v_heads', code: '(V @ W_v.T + b_v).reshape(B, S, H, D).transpose(1, 2)', shape: [B, H, T, D] },
    { name: 'weights', code: 'attn_w (average_attn_weights=False)', shape: [B, H, T, T] },
    { name: 'logits', code: 'self.out(ctx)', shape: [B, T, VOCAB] },
  ],
  compute(x, p) {
    const positions = Array.from({ length: T }, (_, t) => t);
    const withPositions = (ids) => {
      const tokens = embed(p['tok_emb.weight'], Array.from(ids), E);
      const pos = embed(p['in_pos_emb.weight'], positions, E);
      return tokens.map((v, i) => v + pos[i % (T * E)]);
    };
    const K = withPositions(x.key_tokens.data), V = withPositions(x.value_tokens.data);
    const oneQ = embed(p['out_pos_emb.weight'], positions, E);
    const Q = new Float64Array(B * T * E);
    for (let b = 0; b < B; b++) Q.set(oneQ, b * T * E);
    const mha = multiheadAttention(p, 'attn.', Q, K, V, B, T, T, E, H);
    const logits = linear(mha.output, B * T, E, p['out.weight'], p['out.bias'], VOCAB);
    return { K, V, Q, q_heads: mha.q, k_heads: mha.k, v_heads: mha.v, weights: mha.weights, logits };
  },
};
