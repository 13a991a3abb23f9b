// One copy of the Lookup lab's model, the course notebook's AttentionTest (02, section 6.3), with the
// activations of the last batch it saw. P = 784 pixels, S = 100 database images:
//   X_q  = img_mlp(query)                  [B, E]   img_mlp.0 = Linear(P, E), one for queries and database
//   X_db = img_mlp(database)               [S, E]   embedded once per step, by the trainer (embed_database_rows)
//   _, w = mha(X_q, X_db, X_db)            [B, 1, S] head-mean weights (average_attn_weights=True);
//                                                   K and V come from the same X_db, projected once (kv_shared)
//   retrieval = w database                 [B, P]   a weighted sum of the database's images
//   loss = mean((retrieval - query)^2)              over B*P
// Training never forms the retrieval: with G = database database^T [S, S] (fixed data, once a run) and
// database query [S] (once per training query), a query x's squared error is
//   |w D - x|^2 = w G w^T - 2 w (D x) + |x|^2      (D = database, w = its head-mean weights)
// exactly, and its gradient (2/N)(w G - D x) = (2/N)(w D - x) D^T, so the loss and dL/dw cost B*S*S
// instead of two B*S*P products. evaluate() and inspect() still form the retrieval (retrieve()).
// The attention's output (after out_proj) is not used, so out_proj gets no gradient (PyTorch: .grad None,
// which Adam skips; ours stays exactly zero, which moves nothing either) and neither do V's projection
// rows (their gradient is exactly zero in both).
//
// Passes run in stages so that the attention kernel in the middle can run anywhere (WebGPU runs in JS):
//   prepare() -> kernel forward -> finish_forward() [-> loss_backward() -> kernel backward -> finish_backward()]
//                                                   [-> retrieve(), to evaluate or display]
// The trainer keeps one copy per shard of a batch: copy 0 owns the parameters that Adam updates.
#pragma once

#include "../layers/linear.h"
#include "../layers/multihead_attention.h"
#include "lookup_data.h"

namespace attnlab {

// The database as the model uses it: fixed images, and their embedding under the current parameters.
struct LookupDatabase {
  RowMatrix images;      // [S, P] normalised
  RowMatrix images_t;    // [P, S] images transposed (lookup_gram), for the products with queries
  std::vector<double> gram;  // [S, S] images images^T in double (lookup_gram); see loss_backward for why double
  std::vector<std::uint8_t> labels;  // [S]
  RowMatrix weight_t;    // [P, E] img_mlp.0.weight transposed, refreshed before the embedding (transpose_weight)
  RowMatrix embedded;    // [S, E] img_mlp(images), refreshed every step
  RowMatrix d_embedded;  // [S, E] dL/d(embedded), summed over the batch and the shards
};

// db.gram from db.images, summed in double over P; and db.images_t.
void lookup_gram(LookupDatabase& db);

// The loss's terms that depend on the queries alone (training queries are fixed data, so the trainer
// computes them once a run and caches them), in float within blocks of 16 pixels and double across
// them, row by row (a row's bits do not depend on the other rows): images_x [B, S] = queries images^T
// (row b is D x_b), norm2 [B] = |x_b|^2. db.images_t must be current (lookup_gram).
void lookup_query_terms(ConstMatrixRef queries, const LookupDatabase& db, double* images_x, double* norm2);

// sum over rows and columns of (a - b)^2, in float within a row (four lanes) and double across rows;
// with `grad`, also grad = grad_scale (a - b). a, b [N, P].
double squared_error_rows(ConstMatrixRef a, ConstMatrixRef b, float grad_scale, RowMatrix* grad);

class LookupModel {
 public:
  LookupModel(const LookupConfig& config, int pixels, Rng& init_rng);  // pixels P = 784

  ParameterList parameters();  // state_dict order, PyTorch names
  void zero_grad();

  // db.weight_t = img_mlp's weight transposed: before embed_database_rows() and prepare(), once the
  // parameters change (the shards' copies hold the same values, so one transposed copy serves all).
  void transpose_weight(LookupDatabase& db) const;
  // The database's embedding and its backward, by row blocks so that two threads can share them with
  // the same bits as one: embedded[first, first+count) = img_mlp(images[first, first+count));
  // img_mlp's weight rows (and bias entries) [first, first+count) += their share of d_embedded^T images.
  void embed_database_rows(LookupDatabase& db, int first, int count) const;
  void database_backward_rows(const LookupDatabase& db, int first, int count);

  // queries [B, P] normalised; db.weight_t and db.embedded must be current.
  void prepare(ConstMatrixRef queries, const LookupDatabase& db);
  void finish_forward();                   // head mean (the weights are all that training needs)
  void retrieve(const LookupDatabase& db);  // retrieval = w_mean database, for evaluation and display
  // Squared error of the retrieval (from the expansion above, in double, without forming it),
  // normalised by `pixel_count` (the whole batch's B*P, when this is a shard of it), and the backward
  // pass down to the attention kernel. images_x [B, S], norm2 [B]: lookup_query_terms() of this copy's
  // queries. Returns the shard's summed squared error.
  double loss_backward(const double* images_x, const double* norm2, const LookupDatabase& db, double pixel_count);
  // The kernel's gradients down to img_mlp for the queries; d_database() for the trainer to add up.
  void finish_backward(ConstMatrixRef queries);
  // The whole training pass on a CPU kernel (db.embedded must be current).
  double train_pass(ConstMatrixRef queries, const double* images_x, const double* norm2, const LookupDatabase& db,
                    Backend backend, double pixel_count);

  MultiheadAttention& mha() { return mha_; }
  const MultiheadAttention& mha() const { return mha_; }
  const RowMatrix& retrieval() const { return retrieval_; }  // [B, P] after retrieve()
  const RowMatrix& d_database() const { return d_database_; }  // [S, E] this copy's dL/d(X_db)
  // Database index of each query's highest head-mean weight (ties: the lower index).
  int best_match(int b) const;

 private:
  void embed_rows(ConstMatrixRef x, const LookupDatabase& db, MatrixRef y) const;  // y = img_mlp(x)

  LookupConfig config_;
  Linear img_mlp_;
  MultiheadAttention mha_;
  int B_ = 0;
  RowMatrix x_query_, retrieval_, d_weights_mean_, d_database_;
  std::vector<double> weights_gram_;  // [S] one query's w_mean G
  std::vector<float> d_weights_;  // [B, H, 1, S]
};

}  // namespace attnlab
