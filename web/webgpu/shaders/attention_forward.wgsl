// Attention forward: one workgroup per query row (b, h, t), its threads striding over S for the scores
// and over D for the weighted sum. The passes are those of core/attention_scalar.cpp.
//
//   q        [B, H, T, D]   read
//   k, v     [B, H, S, D]   read
//   mask     additive, element (b, h, t, s) at b*mask_stride_b + h*mask_stride_h + t*S + s;
//            -inf = may not attend; read only when has_mask = 1 (otherwise a 16-byte placeholder)
//   weights  [B, H, T, S]   written: softmax(scale * q k^T + mask) over s
//   out      [B, H, T, D]   written: weights v
//
// Dispatch: B*H*T workgroups, folded into (x, y) when x would pass 65535: row = x + y * num_workgroups.x.
// WORKGROUP_SIZE must be a power of two (the reductions halve it).

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read> k: array<f32>;
@group(0) @binding(3) var<storage, read> v: array<f32>;
@group(0) @binding(4) var<storage, read> mask: array<f32>;
@group(0) @binding(5) var<storage, read_write> weights: array<f32>;
@group(0) @binding(6) var<storage, read_write> out: array<f32>;

var<workgroup> partial: array<f32, WORKGROUP_SIZE>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) groups: vec3u,
        @builtin(local_invocation_index) lid: u32) {
  let row = wid.x + wid.y * groups.x;  // (b*H + h)*T + t
  if (row >= p.B * p.H * p.T) {
    return;  // the fold's last line of workgroups may overhang; the whole workgroup leaves together
  }
  let bh = row / p.T;
  let t = row % p.T;
  let b = bh / p.H;
  let h = bh % p.H;
  let q_row = row * p.D;
  let kv_base = bh * p.S * p.D;
  let w_row = row * p.S;
  let mask_row = b * p.mask_stride_b + h * p.mask_stride_h + t * p.S;

  // 1. scores = scale * q_t . k_s + mask, and this thread's part of the row max
  var local_max = p.neg_inf;
  for (var s = lid; s < p.S; s += WORKGROUP_SIZE) {
    var qk = 0.0;
    let k_row = kv_base + s * p.D;
    for (var d = 0u; d < p.D; d++) {
      qk += q[q_row + d] * k[k_row + d];
    }
    var score = p.scale * qk;
    if (p.has_mask != 0u) {
      score += mask[mask_row + s];
    }
    weights[w_row + s] = score;
    local_max = max(local_max, score);
  }
  partial[lid] = local_max;
  for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride /= 2u) {
    workgroupBarrier();
    if (lid < stride) {
      partial[lid] = max(partial[lid], partial[lid + stride]);
    }
  }
  let row_max = workgroupUniformLoad(&partial[0]);

  // 2. a fully masked row attends to nothing: zero weights, zero output (PyTorch gives NaN)
  if (row_max == p.neg_inf) {
    for (var s = lid; s < p.S; s += WORKGROUP_SIZE) {
      weights[w_row + s] = 0.0;
    }
    for (var d = lid; d < p.D; d += WORKGROUP_SIZE) {
      out[q_row + d] = 0.0;
    }
    return;
  }

  // 3. exp(score - max) and the row sum; a masked score gives exactly 0, whatever exp() rounds to
  var local_sum = 0.0;
  for (var s = lid; s < p.S; s += WORKGROUP_SIZE) {
    let score = weights[w_row + s];
    let e = select(exp(score - row_max), 0.0, score == p.neg_inf);
    weights[w_row + s] = e;
    local_sum += e;
  }
  workgroupBarrier();  // everyone has read partial[0] before it is overwritten
  partial[lid] = local_sum;
  for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride /= 2u) {
    workgroupBarrier();
    if (lid < stride) {
      partial[lid] += partial[lid + stride];
    }
  }
  let inv_sum = 1.0 / workgroupUniformLoad(&partial[0]);

  // 4. normalise (each thread its own s: no barrier needed yet)
  for (var s = lid; s < p.S; s += WORKGROUP_SIZE) {
    weights[w_row + s] *= inv_sum;
  }
  storageBarrier();  // 5. reads every thread's weights

  // 5. weighted sum of values, threads now striding over D
  for (var d = lid; d < p.D; d += WORKGROUP_SIZE) {
    var acc = 0.0;
    for (var s = 0u; s < p.S; s++) {
      acc += weights[w_row + s] * v[kv_base + s * p.D + d];
    }
    out[q_row + d] = acc;
  }
}
