#include "lookup_model.h"

#include "../gemm.h"
#include "../vec4.h"

namespace attnlab {

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

void LookupModel::zero_grad() {
  for (Parameter* p : parameters()) p->zero_grad();
}

void LookupModel::copy_values_from(LookupModel& other) {
  const ParameterList mine = parameters(), theirs = other.parameters();
  for (std::size_t i = 0; i < mine.size(); ++i) mine[i]->value = theirs[i]->value;
}

void LookupModel::add_grads_to(LookupModel& other) {
  const ParameterList mine = parameters(), theirs = other.parameters();
  for (std::size_t i = 0; i < mine.size(); ++i) theirs[i]->grad += mine[i]->grad;
}

void LookupModel::embed_database_rows(LookupDatabase& db, int first, int count) const {
  // X_db = img_mlp(database): each row on its own, so a block of rows gives the whole product's bits
  img_mlp_.forward(db.images.middleRows(first, count), db.embedded.middleRows(first, count));
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
  img_mlp_.forward(queries, x_query_);
  // _, w = mha(X_q, X_db, X_db): one query per batch element, the same keys and values for all
  MhaInputs in{B_, 1, S, x_query_.data(), db.embedded.data(), db.embedded.data()};
  in.kv_shared = true;
  mha_.prepare(in);
}

void LookupModel::finish_forward(const LookupDatabase& db) {
  mha_.finish_forward();
  // retrieval = w_mean database   [B, S] x [S, P]
  const int S = int(db.images.rows());
  retrieval_.resize(B_, db.images.cols());
  gemm_ab(ConstMatrixMap(mha_.weights_mean().data(), B_, S), db.images, retrieval_);
}

double LookupModel::loss_backward(ConstMatrixRef queries, const LookupDatabase& db, double pixel_count) {
  const int H = config_.heads, S = int(db.images.rows());
  // loss = sum (retrieval - query)^2 / pixel_count, and from it dL/d(retrieval) = 2 (retrieval - query) / pixel_count
  d_retrieval_.resize(retrieval_.rows(), retrieval_.cols());
  const double squared_error = squared_error_rows(retrieval_, queries, float(2.0 / pixel_count), &d_retrieval_);
  // from retrieval = w_mean database:  dL/dw_mean = dL/d(retrieval) database^T
  d_weights_mean_.resize(B_, S);
  gemm_ab(d_retrieval_, db.images_t, d_weights_mean_);
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

double LookupModel::train_pass(ConstMatrixRef queries, const LookupDatabase& db, Backend backend,
                               double pixel_count) {
  zero_grad();
  prepare(queries, db);
  attention_forward(backend, mha_.kernel_forward_args());
  finish_forward(db);
  const double squared_error = loss_backward(queries, db, pixel_count);
  attention_backward(backend, mha_.kernel_backward_args());
  finish_backward(queries);
  return squared_error;
}

int LookupModel::best_match(int b) const {
  const std::vector<float>& w = mha_.weights_mean();  // [B, 1, S]
  const int S = mha_.shape().S;
  const float* row = &w[std::size_t(b) * S];
  int best = 0;
  for (int s = 1; s < S; ++s)
    if (row[s] > row[best]) best = s;
  return best;
}

}  // namespace attnlab
