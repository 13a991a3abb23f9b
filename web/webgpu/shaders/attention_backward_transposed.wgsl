// Attention backward, step 3 of 4: dK = dScores^T Q (differentiates pass 1, score_s = scale q_t . k_s;
// the scale is already in d_scores). One thread per element of dK.
//
//   q          [B, H, T, D]   read
//   d_scores   [B, H, T, S]   read (from attention_backward_dscores.wgsl)
//   d_k        [B, H, S, D]   written
//
// Dispatch: ceil(B*H*S*D / WORKGROUP_SIZE) workgroups, folded into (x, y):
// i = global_id.x + global_id.y * num_workgroups.x * WORKGROUP_SIZE.

struct Params {
  B: u32,
  H: u32,
  T: u32,
  S: u32,
  D: u32,
  mask_stride_b: u32,  // forward only
  mask_stride_h: u32,  // forward only
  has_mask: u32,       // forward only
  has_d_weights: u32,  // dscores only
  scale: f32,          // already folded into d_scores
  neg_inf: f32,        // forward only
  _pad: u32,
}

override WORKGROUP_SIZE: u32 = 64u;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read> d_scores: array<f32>;
@group(0) @binding(3) var<storage, read_write> d_k: array<f32>;

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
  let ds_col = bh * p.T * p.S + s;
  let q_base = bh * p.T * p.D + d;
  var acc = 0.0;
  for (var t = 0u; t < p.T; t++) {
    acc += d_scores[ds_col + t * p.S] * q[q_base + t * p.D];
  }
  d_k[i] = acc;
}
