// Attention backward, step 1 of 4: gradients of the scores. One workgroup per query row (b, h, t).
// Differentiates passes 5 (weighted sum), 3+4 (softmax) and the scale of pass 1 of
// attention_forward.wgsl.
//
//   v          [B, H, S, D]   read
//   weights    [B, H, T, S]   read (the forward's; masked weights are exactly 0, so no gradient flows)
//   d_out      [B, H, T, D]   read
//   d_weights  [B, H, T, S]   read only when has_d_weights = 1 (otherwise a 16-byte placeholder)
//   d_scores   [B, H, T, S]   written: scale * w_s * (dw_s - sum_j w_j dw_j), dw_s = d_out_t . v_s + d_weights_ts
//
// Dispatch: B*H*T workgroups, folded into (x, y): row = x + y * num_workgroups.x.
// WORKGROUP_SIZE must be a power of two.

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> v: array<f32>;
@group(0) @binding(2) var<storage, read> weights: array<f32>;
@group(0) @binding(3) var<storage, read> d_out: array<f32>;
@group(0) @binding(4) var<storage, read> d_weights: array<f32>;
@group(0) @binding(5) var<storage, read_write> d_scores: array<f32>;

var<workgroup> partial: array<f32, WORKGROUP_SIZE>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) groups: vec3u,
        @builtin(local_invocation_index) lid: u32) {
  let row = wid.x + wid.y * groups.x;  // (b*H + h)*T + t
  if (row >= p.B * p.H * p.T) {
    return;
  }
  let bh = row / p.T;
  let g_row = row * p.D;
  let v_base = bh * p.S * p.D;
  let w_row = row * p.S;

  // from 5. out_t = sum_s w_s v_s:  dw_s = g . v_s (+ dL/dw_s), and this thread's part of sum_s w_s dw_s
  var local_dot = 0.0;
  for (var s = lid; s < p.S; s += WORKGROUP_SIZE) {
    var dw = 0.0;
    if (p.has_d_weights != 0u) {
      dw = d_weights[w_row + s];
    }
    let v_row = v_base + s * p.D;
    for (var d = 0u; d < p.D; d++) {
      dw += d_out[g_row + d] * v[v_row + d];
    }
    d_scores[w_row + s] = dw;
    local_dot += weights[w_row + s] * dw;
  }
  partial[lid] = local_dot;
  for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride /= 2u) {
    workgroupBarrier();
    if (lid < stride) {
      partial[lid] += partial[lid + stride];
    }
  }
  let dot_w_dw = workgroupUniformLoad(&partial[0]);

  // from 3.+4. softmax: d_score_s = w_s (dw_s - sum_j w_j dw_j); from 1.: times scale.
  // Each thread rewrites only the s it wrote above.
  for (var s = lid; s < p.S; s += WORKGROUP_SIZE) {
    let w = weights[w_row + s];
    d_scores[w_row + s] = p.scale * (w * (d_scores[w_row + s] - dot_w_dw));
  }
}
