// Shared by every attention shader: scripts/gen_shaders.mjs puts this file in front of each of them.
// Shapes use the legend of core/shape.h.

struct Params {
  B: u32,
  H: u32,
  T: u32,
  S: u32,
  D: u32,
  mask_stride_b: u32,  // forward only: additive mask element (b, h, t, s) at b*stride_b + h*stride_h + t*S + s
  mask_stride_h: u32,  // forward only
  has_mask: u32,       // forward only
  has_d_weights: u32,  // backward dscores only
  scale: f32,          // forward and dscores; dQ and dK get it through d_scores
  // WGSL has no infinity literal and a constant that overflows is a shader-creation error, so the
  // host passes -inf here: the row max starts at it, never at a sentinel.
  neg_inf: f32,
  _pad: u32,
}

override WORKGROUP_SIZE: u32 = 64u;
