// Attention backward, step 4 of 4: dV = W^T dOut (differentiates pass 5, out_t = sum_s w_s v_s).
// One thread per element of dV.
//
//   weights    [B, H, T, S]   read (the forward's)
//   d_out      [B, H, T, D]   read
//   d_v        [B, H, S, D]   written
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
  scale: f32,          // not used by dV
  neg_inf: f32,        // forward only
  _pad: u32,
}

override WORKGROUP_SIZE: u32 = 64u;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> weights: array<f32>;
@group(0) @binding(2) var<storage, read> d_out: array<f32>;
@group(0) @binding(3) var<storage, read_write> d_v: array<f32>;

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
  let w_col = bh * p.T * p.S + s;
  let g_base = bh * p.T * p.D + d;
  var acc = 0.0;
  for (var t = 0u; t < p.T; t++) {
    acc += weights[w_col + t * p.S] * d_out[g_base + t * p.D];
  }
  d_v[i] = acc;
}
