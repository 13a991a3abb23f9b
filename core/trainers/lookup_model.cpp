#include "lookup_model.h"

#include "../gemm.h"
#include "../vec4.h"

namespace attnlab {

void lookup_gram(LookupDatabase& db) {
  const int S = int(db.images.rows()), P = int(db.images.cols());
  db.gram.assign(std::size_t(S) * S, 0.0);
  for (int s = 0; s < S; ++s)
    for (int t = 0; t <= s; ++t) {
      double sum = 0.0;
      for (int p = 0; p < P; ++p) sum += double(db.images(s, p)) * double(db.images(t, p));
      db.gram[std::size_t(s) * S + t] = db.gram[std::size_t(t) * S + s] = sum;  // symmetric: w G = (G w^T)^T
    }
  db.images_t = db.images.transpose();
}

void lookup_query_terms(ConstMatrixRef queries, const LookupDatabase& db, double* images_x, double* norm2) {
  using namespace vec4;
  const int S = int(db.images.rows()), P = int(db.images.cols());
  // D x for every query at once: queries [B, P] times images^T [P, S], in float within blocks of 16
  // pixels and double across them (gemm_ab_blocked_double). A block's sum is at most 16 in size (pixels
  // in [-1, 1]), so its float rounding is ~1e-6 where a float sum over all 784 pixels (partial sums
  // ~hundreds) would be ~1e-4; and the blocks run on float's register tiles, which reuse each loaded
  // pixel for eight database images. (A dot product per pair reused nothing: 31% of the instructions
  // of 300 training steps, callgrind, nearly all in the first epoch, when every query's terms are new;
  // the tiles take 2.8x fewer.)
  gemm_ab_blocked_double(queries, db.images_t, images_x, S);
  // |x|^2 the same way: four float lanes over blocks of 16 pixels, then double across blocks.
  const int blocks = P / 16;
  for (Eigen::Index b = 0; b < queries.rows(); ++b) {
    const float* x = queries.row(b).data();
    double lanes[4] = {0.0, 0.0, 0.0, 0.0};
    for (int k = 0; k < blocks; ++k) {
      const float* xk = x + 16 * k;
      f32x4 sum4 = mul4(load4(xk), load4(xk));
      sum4 = add4(sum4, mul4(load4(xk + 4), load4(xk + 4)));
      sum4 = add4(sum4, mul4(load4(xk + 8), load4(xk + 8)));
      sum4 = add4(sum4, mul4(load4(xk + 12), load4(xk + 12)));
      for (int i = 0; i < 4; ++i) lanes[i] += double(lane(sum4, i));
    }
    double sum = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
    for (int p = 16 * blocks; p < P; ++p) sum += double(x[p]) * double(x[p]);  // leftovers
    norm2[b] = sum;
  }
}

namespace {

// out[s] = sum_t w[t] G[t, s], over t in ascending order, in double: eight columns at a time in
// registers (two-lane vectors), then two, then one.
void weights_gram_row(const float* w, const double* gram, int S, double* out) {
  using namespace vec4;
  int s = 0;
  for (; s + 8 <= S; s += 8) {
    f64x2 c0 = {0.0, 0.0}, c1 = c0, c2 = c0, c3 = c0;
    for (int t = 0; t < S; ++t) {
      const double* g = gram + std::size_t(t) * S + s;
      const f64x2 wt = {double(w[t]), double(w[t])};
      c0 += wt * load2d(g), c1 += wt * load2d(g + 2), c2 += wt * load2d(g + 4), c3 += wt * load2d(g + 6);
    }
    store2d(out + s, c0), store2d(out + s + 2, c1), store2d(out + s + 4, c2), store2d(out + s + 6, c3);
  }
  for (; s + 2 <= S; s += 2) {
    f64x2 c = {0.0, 0.0};
    for (int t = 0; t < S; ++t) c += f64x2{double(w[t]), double(w[t])} * load2d(gram + std::size_t(t) * S + s);
    store2d(out + s, c);
  }
  for (; s < S; ++s) {  // leftovers
    double c = 0.0;
    for (int t = 0; t < S; ++t) c += double(w[t]) * gram[std::size_t(t) * S + s];
    out[s] = c;
  }
}

}  // namespace

double squared_error_rows(ConstMatrixRef a, ConstMatrixRef b, float grad_scale, RowMatrix* grad) {
  using namespace vec4;
  const int P = int(a.cols());
  const f32x4 scale4 = splat4(grad_scale);
  double total = 0.0;
  for (Eigen::Index r = 0; r < a.rows(); ++r) {
    const float* x = a.row(r).data();
    const float* y = b.row(r).data();
    float* g = grad ? grad->row(r).data() : nullptr;
    f32x4 sum4 = zero4();
    int i = 0;
    for (; i + 4 <= P; i += 4) {
      const f32x4 d = sub4(load4(x + i), load4(y + i));
      sum4 = add4(sum4, mul4(d, d));
      if (g) store4(g + i, mul4(d, scale4));
    }
    float sum = hsum(sum4);
    for (; i < P; ++i) {  // leftovers
      const float d = x[i] - y[i];
      sum += d * d;
      if (g) g[i] = d * grad_scale;
    }
    total += double(sum);
  }
  return total;
}

LookupModel::LookupModel(const LookupConfig& config, int pixels, Rng& init_rng)
    : config_(config),
      // PyTorch builds img_mlp before mha, and so do we (the draws differ, the distributions do not)
      img_mlp_(pixels, config.embed_dim, init_rng),
      mha_(config.embed_dim, config.heads, init_rng) {
  img_mlp_.weight.name = "img_mlp.0.weight";
  img_mlp_.bias.name = "img_mlp.0.bias";
  mha_.in_proj_weight.name = "mha.in_proj_weight";
  mha_.in_proj_bias.name = "mha.in_proj_bias";
  mha_.out_proj_weight.name = "mha.out_proj.weight";
  mha_.out_proj_bias.name = "mha.out_proj.bias";
}

ParameterList LookupModel::parameters() {
  ParameterList list = img_mlp_.parameters();
  for (Parameter* p : mha_.parameters()) list.push_back(p);
  return list;
}

void LookupModel::zero_grad() { zero_grads(parameters()); }



void LookupModel::transpose_weight(LookupDatabase& db) const { db.weight_t = img_mlp_.weight.value.transpose(); }

void LookupModel::embed_rows(ConstMatrixRef x, const LookupDatabase& db, MatrixRef y) const {
  // img_mlp(x) = x W^T + b, as Linear::forward computes it (gemm_abt transposes W and calls the same
  // tiled product: the same bits), with the W^T of transpose_weight(): transposing W [E, P] on every
  // call was 5% of a WASM step (four calls a step, one per database part and shard).
  gemm_ab(x, db.weight_t, y);
  y.rowwise() += img_mlp_.bias.value.row(0);
}

void LookupModel::embed_database_rows(LookupDatabase& db, int first, int count) const {
  // X_db = img_mlp(database): each row on its own, so a block of rows gives the whole product's bits
  embed_rows(db.images.middleRows(first, count), db, db.embedded.middleRows(first, count));
}

void LookupModel::database_backward_rows(const LookupDatabase& db, int first, int count) {
  // from X_db = database W^T + b:  dW[e, :] += sum_s dX_db[s, e] database[s, :], db[e] += sum_s dX_db[s, e]
  gemm_atb_add(db.d_embedded.middleCols(first, count), db.images, img_mlp_.weight.grad.middleRows(first, count));
  // a plain loop over s, so the sums do not depend on where the block starts (Eigen's colwise sum
  // vectorises some columns and not others)
  for (int e = first; e < first + count; ++e) {
    float sum = 0.0f;
    for (Eigen::Index s = 0; s < db.d_embedded.rows(); ++s) sum += db.d_embedded(s, e);
    img_mlp_.bias.grad(0, e) += sum;
  }
}

void LookupModel::prepare(ConstMatrixRef queries, const LookupDatabase& db) {
  B_ = int(queries.rows());
  const int S = int(db.embedded.rows());
  // X_q = img_mlp(query)
  x_query_.resize(B_, config_.embed_dim);
  embed_rows(queries, db, x_query_);
  // _, w = mha(X_q, X_db, X_db): one query per batch element, the same keys and values for all
  MhaInputs in{B_, 1, S, x_query_.data(), db.embedded.data(), db.embedded.data()};
  in.kv_shared = true;
  mha_.prepare(in);
}

void LookupModel::finish_forward() { mha_.finish_forward(); }

void LookupModel::retrieve(const LookupDatabase& db) {
  // retrieval = w_mean database   [B, S] x [S, P]
  const int S = int(db.images.rows());
  retrieval_.resize(B_, db.images.cols());
  gemm_ab(ConstMatrixMap(mha_.weights_mean().data(), B_, S), db.images, retrieval_);
}

double LookupModel::loss_backward(const double* images_x, const double* norm2, const LookupDatabase& db,
                                  double pixel_count) {
  const int H = config_.heads, S = int(db.images.rows());
  const float* w_mean = mha_.weights_mean().data();  // [B, S]
  // Why double: normalised pixels are mostly -1, so G's entries and D x are ~hundreds (|d|^2 ~ 600)
  // while their differences below, the gradient, are ~tens and the squared error ~120 a query: in
  // float, G's rounding alone (~3e-5 an entry) would be as large as the whole error of the retrieval
  // path, and Adam at lr 1e-2 turns such differences into visibly different steps (the PyTorch parity
  // test after three steps). Double costs B*S*S multiply-adds a step, a tenth of the products it replaces.
  const double scale = 2.0 / pixel_count;
  d_weights_mean_.resize(B_, S);
  weights_gram_.resize(S);
  double squared_error = 0.0;
  for (int b = 0; b < B_; ++b) {
    const float* w = w_mean + std::size_t(b) * S;
    const double* dx = images_x + std::size_t(b) * S;
    // w_b G [S]; also retrieval_b D^T, since retrieval_b = w_b D and G = D D^T
    weights_gram_row(w, db.gram.data(), S, weights_gram_.data());
    // Forward. loss = sum_b |retrieval_b - x_b|^2 / pixel_count, the square expanded with retrieval_b = w_b D:
    //   |w_b D - x_b|^2 = w_b (D D^T) w_b^T - 2 w_b (D x_b) + x_b . x_b = w_b . (w_b G) - 2 w_b . (D x_b) + |x_b|^2
    // an identity, not an approximation: only the rounding differs from summing over the pixels.
    double w_gram_w = 0.0, w_images_x = 0.0;
    for (int s = 0; s < S; ++s) {
      w_gram_w += double(w[s]) * weights_gram_[s];
      w_images_x += double(w[s]) * dx[s];
    }
    squared_error += w_gram_w - 2.0 * w_images_x + norm2[b];
    // Backward of that line (G symmetric; D x_b and |x_b|^2 are data):
    //   dL/dw_b = (2 w_b G - 2 D x_b) / pixel_count
    // which is the chain through the retrieval, dL/d(retrieval_b) D^T = 2 (w_b D - x_b) D^T / pixel_count.
    for (int s = 0; s < S; ++s) d_weights_mean_(b, s) = float((weights_gram_[s] - dx[s]) * scale);
  }
  // from w_mean = (1/H) sum_h w_h:  dL/dw_h = dL/dw_mean / H   ([B, H, T=1, S])
  d_weights_.resize(std::size_t(B_) * H * S);
  for (int b = 0; b < B_; ++b)
    for (int h = 0; h < H; ++h)
      for (int s = 0; s < S; ++s) d_weights_[(std::size_t(b) * H + h) * S + s] = d_weights_mean_(b, s) / float(H);
  // the loss never sees the attention's output: no d_out, no out_proj gradient
  mha_.begin_backward(nullptr, d_weights_.data());
  return squared_error;
}

void LookupModel::finish_backward(ConstMatrixRef queries) {
  mha_.finish_backward();
  // from X_q = img_mlp(query): the queries are data, so only W and b get gradients
  img_mlp_.backward(queries, mha_.d_query(), nullptr);
  // from key = value = X_db: both paths add up (V's is exactly zero, the output being unused)
  d_database_.resize(mha_.d_key().rows(), mha_.d_key().cols());
  d_database_ = mha_.d_key() + mha_.d_value();
}

double LookupModel::train_pass(ConstMatrixRef queries, const double* images_x, const double* norm2,
                               const LookupDatabase& db, Backend backend, double pixel_count) {
  zero_grad();
  prepare(queries, db);
  attention_forward(backend, mha_.kernel_forward_args());
  finish_forward();
  const double squared_error = loss_backward(images_x, norm2, db, pixel_count);
  attention_backward(backend, mha_.kernel_backward_args());
  finish_backward(queries);
  return squared_error;
}

int LookupModel::best_match(int b) const {
  const std::vector<float>& w = mha_.weights_mean();  // [B, 1, S]
  const int S = mha_.shape().S;
  const float* row = &w[std::size_t(b) * S];
  int best = 0;
  float best_weight = row[0];  // row[best], kept in a register (reloading it was 2.6% of a WASM step)
  for (int s = 1; s < S; ++s)
    if (row[s] > best_weight) best = s, best_weight = row[s];
  return best;
}

}  // namespace attnlab
