// Attention backward, the two products that run over T with a transposed left factor, one shader:
//   dK = dScores^T Q    (a = d_scores, b = q):     differentiates pass 1, score_s = scale q_t . k_s
//                                                  (the scale is already in d_scores)
//   dV = Weights^T dOut (a = weights,  b = d_out): differentiates pass 5, out_t = sum_s w_s v_s
// out[b, h, s, d] = sum_t a[b, h, t, s] * b[b, h, t, d]. One thread per element of out.
//
//   a     [B, H, T, S]   read
//   b     [B, H, T, D]   read
//   out   [B, H, S, D]   written
//
// Dispatch: ceil(B*H*S*D / WORKGROUP_SIZE) workgroups, folded into (x, y):
// i = global_id.x + global_id.y * num_workgroups.x * WORKGROUP_SIZE.

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let i = gid.x + gid.y * groups.x * WORKGROUP_SIZE;  // ((b*H + h)*S + s)*D + d
  if (i >= p.B * p.H * p.S * p.D) {
    return;
  }
  let key = i / p.D;  // (b*H + h)*S + s
  let d = i % p.D;
  let bh = key / p.S;
  let s = key % p.S;
  let a_col = bh * p.T * p.S + s;
  let b_col = bh * p.T * p.D + d;
  var acc = 0.0;
  for (var t = 0u; t < p.T; t++) {
    acc += a[a_col + t * p.S] * b[b_col + t * p.D];
  }
  out[i] = acc;
}
