// The builds' reference numbers (web/labs/builds/*): plain loops in double precision over flat
// row-major arrays, as the notebooks' modules compute them in float32. A student's float32 tensor is
// compared with these to 1e-5 (judge.js), far above float32's rounding for these sizes.
//
// Shapes follow the dimension legend (core/shape.h): B batch, H heads, T query length, S key length,
// D head dim, E model dim.

/** x [rows, inDim] -> x W^T + b: [rows, outDim] (nn.Linear; W [outDim, inDim], b [outDim] or null). */
export function linear(x, rows, inDim, W, b, outDim) {
  const y = new Float64Array(rows * outDim);
  for (let r = 0; r < rows; r++) {
    for (let o = 0; o < outDim; o++) {
      let sum = b ? b[o] : 0;
      for (let k = 0; k < inDim; k++) sum += x[r * inDim + k] * W[o * inDim + k];
      y[r * outDim + o] = sum;
    }
  }
  return y;
}

/** a [n, T, D] times b [n, S, D] transposed -> [n, T, S] (torch.matmul(a, b.transpose(-2, -1))), times `scale`. */
export function matmulTransposed(a, b, n, T, S, D, scale = 1) {
  const out = new Float64Array(n * T * S);
  for (let i = 0; i < n; i++) {
    for (let t = 0; t < T; t++) {
      for (let s = 0; s < S; s++) {
        let sum = 0;
        for (let d = 0; d < D; d++) sum += a[(i * T + t) * D + d] * b[(i * S + s) * D + d];
        out[(i * T + t) * S + s] = sum * scale;
      }
    }
  }
  return out;
}

/** w [n, T, S] times v [n, S, D] -> [n, T, D] (torch.matmul / torch.bmm). */
export function matmul(w, v, n, T, S, D) {
  const out = new Float64Array(n * T * D);
  for (let i = 0; i < n; i++) {
    for (let t = 0; t < T; t++) {
      for (let s = 0; s < S; s++) {
        const weight = w[(i * T + t) * S + s];
        for (let d = 0; d < D; d++) out[(i * T + t) * D + d] += weight * v[(i * S + s) * D + d];
      }
    }
  }
  return out;
}

/**
 * Softmax of every row of `width` numbers (the last axis, dim=-1). The row max starts at -Infinity, so
 * -inf scores (a masked key) get weight 0; a row of only -inf is NaN, as in PyTorch.
 */
export function softmaxRows(x, width) {
  const out = new Float64Array(x.length);
  for (let r = 0; r < x.length / width; r++) {
    let max = -Infinity;
    for (let s = 0; s < width; s++) max = Math.max(max, x[r * width + s]);
    let sum = 0;
    for (let s = 0; s < width; s++) sum += (out[r * width + s] = Math.exp(x[r * width + s] - max));
    for (let s = 0; s < width; s++) out[r * width + s] /= sum;
  }
  return out;
}

/** scores [n, T, S] where mask [T, S] is 0 -> -inf (masked_fill(mask == 0, float('-inf'))). */
export function maskFill(scores, mask, n, T, S) {
  const out = Float64Array.from(scores);
  for (let i = 0; i < n; i++) for (let j = 0; j < T * S; j++) if (mask[j] === 0) out[i * T * S + j] = -Infinity;
  return out;
}

/** Rows of an embedding table: ids -> [ids.length, E]. */
export function embed(table, ids, E) {
  const out = new Float64Array(ids.length * E);
  ids.forEach((id, i) => out.set(table.subarray(id * E, (id + 1) * E), i * E));
  return out;
}

/** [B, T, H * D] -> [B, H, T, D]: x.reshape(B, T, H, D).transpose(1, 2). */
function splitHeads(x, B, T, H, D) {
  const out = new Float64Array(x.length);
  for (let b = 0; b < B; b++) for (let t = 0; t < T; t++) for (let h = 0; h < H; h++) for (let d = 0; d < D; d++) {
    out[((b * H + h) * T + t) * D + d] = x[(b * T + t) * H * D + h * D + d];
  }
  return out;
}

/** [B, H, T, D] -> [B, T, H * D]: the heads side by side again. */
function joinHeads(x, B, T, H, D) {
  const out = new Float64Array(x.length);
  for (let b = 0; b < B; b++) for (let t = 0; t < T; t++) for (let h = 0; h < H; h++) for (let d = 0; d < D; d++) {
    out[(b * T + t) * H * D + h * D + d] = x[((b * H + h) * T + t) * D + d];
  }
  return out;
}

/**
 * nn.MultiheadAttention(E, H, batch_first=True) in eval mode on query [B, T, E], key and value [B, S, E],
 * with its state_dict entries under `prefix` (in_proj_weight [3E, E], in_proj_bias, out_proj.weight,
 * out_proj.bias) -> {q, k, v} per head ([B, H, T|S, D]), weights [B, H, T, S], output [B, T, E].
 */
export function multiheadAttention(p, prefix, query, key, value, B, T, S, E, H) {
  const D = E / H;
  const W = p[`${prefix}in_proj_weight`], bias = p[`${prefix}in_proj_bias`];
  const part = (x, rows, i) => linear(x, rows, E, W.subarray(i * E * E, (i + 1) * E * E),
    bias.subarray(i * E, (i + 1) * E), E);
  const q = splitHeads(part(query, B * T, 0), B, T, H, D);
  const k = splitHeads(part(key, B * S, 1), B, S, H, D);
  const v = splitHeads(part(value, B * S, 2), B, S, H, D);
  const weights = softmaxRows(matmulTransposed(q, k, B * H, T, S, D, 1 / Math.sqrt(D)), S);
  const heads = joinHeads(matmul(weights, v, B * H, T, S, D), B, T, H, D);
  const output = linear(heads, B * T, E, p[`${prefix}out_proj.weight`], p[`${prefix}out_proj.bias`], E);
  return { q, k, v, weights, output };
}

/** weights [B, H, T, S] -> their mean over the heads [B, T, S] (average_attn_weights=True). */
export function meanOverHeads(weights, B, H, T, S) {
  const out = new Float64Array(B * T * S);
  for (let b = 0; b < B; b++) for (let h = 0; h < H; h++) for (let j = 0; j < T * S; j++) out[b * T * S + j] += weights[(b * H + h) * T * S + j] / H;
  return out;
}
