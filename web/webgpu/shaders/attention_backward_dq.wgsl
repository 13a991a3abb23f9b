// Attention backward, step 2 of 4: dQ = dScores K (differentiates pass 1, score_s = scale q_t . k_s;
// the scale is already in d_scores). One thread per element of dQ.
//
//   k          [B, H, S, D]   read
//   d_scores   [B, H, T, S]   read (from attention_backward_dscores.wgsl)
//   d_q        [B, H, T, D]   written
//
// Dispatch: ceil(B*H*T*D / WORKGROUP_SIZE) workgroups, folded into (x, y):
// i = global_id.x + global_id.y * num_workgroups.x * WORKGROUP_SIZE.

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> k: array<f32>;
@group(0) @binding(2) var<storage, read> d_scores: array<f32>;
@group(0) @binding(3) var<storage, read_write> d_q: array<f32>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let i = gid.x + gid.y * groups.x * WORKGROUP_SIZE;  // ((b*H + h)*T + t)*D + d
  if (i >= p.B * p.H * p.T * p.D) {
    return;
  }
  let row = i / p.D;  // (b*H + h)*T + t
  let d = i % p.D;
  let bh = row / p.T;
  let ds_row = row * p.S;
  let k_base = bh * p.S * p.D + d;
  var acc = 0.0;
  for (var s = 0u; s < p.S; s++) {
    acc += d_scores[ds_row + s] * k[k_base + s * p.D];
  }
  d_q[i] = acc;
}
