// One copy of the Count lab's model, the course notebook's AttentionModel (05, "more 2s than 4s?"),
// with the activations of the last rows it saw. S = 10 positions, V = 10 digits, and the notebook's
// sizes (CountSizes: embed_dim E = 5, att_dim A = 5, the head's hidden H = 200 by default):
//   e = embed(x)                          [B, S, E]   Embedding(10, E), or the notebook's alternative:
//                                                     Linear(10, E) on one_hot(x) (CountEmbedding below)
//   k = WK(e)                             [B, S, A]   Linear(E, A)
//   v = WV(e)                             [B, S]      Linear(E, 1)
//   w = softmax_s(query . k_s / sqrt(A))  [B, S]      one learned query [1, A]
//   a = sum_s w_s v_s                     [B]         the attention-weighted value
//   p = nn(a)                             [B]         Linear(1, H), ReLU, Linear(H, 1), Sigmoid
//   loss = binary_cross_entropy(p, y)                 y = 1 when count(2) > count(4); ties are 0
// A position's key and value depend on its digit alone, so the 10 digits are embedded and projected
// once a pass (table = embed(0..9) [V, E], digit_keys = WK(table) [V, A], digit_values = WV(table) [V])
// and gathered: the same
// numbers as projecting every position's embedding, at a tenth of the work (PyTorch sums in another
// order, within float rounding: tests/core/test_count_torch.cpp).
//
// The attention runs through the kernel (core/attention.h) with H = 1, T = 1, S = 10, D = A:
// q = the query, repeated for every sample; k = the gathered keys; v = the values in column 0 of a
// D-wide row (the kernel takes one width for q, k and v; the other columns are 0), so out[b][0] = a_b.
//
// The head (nn) and the scatter of the digits' gradients run over all the rows at once, four floats
// a vector (count_model_simd128.h): a step is 100 rows of one number, so per-row passes over the H
// hidden units cost more in loads and stores than in arithmetic. They keep the plain loops' order of
// every sum, so the bits do not depend on it.
//
// Passes run in stages so that the kernel in the middle can run anywhere (WebGPU runs in JS):
//   prepare() -> kernel forward -> finish_forward() [-> loss_backward() -> kernel backward -> finish_backward()]
// The kernel's tensors live in a CountKernelTensors, one set for a whole batch; each copy of the model
// works on its rows of it (attach()). The staged step runs one kernel call over the whole batch and
// step() one per shard; the kernel treats each sample on its own, so both give the same bits.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "../attention.h"
#include "../layers/embedding.h"
#include "../layers/linear.h"
#include "count_model_simd128.h"

namespace attnlab {

struct CountShape {
  static constexpr int S = 10;       // positions in a sequence
  static constexpr int V = 10;       // digits 0..9
};

// The notebook's sizes, its self.embed_dim = 5, self.att_dim = 5 and the head's Linear(1, 200): the
// lab's settings embedDim, attDim and hidden (count_trainer.h checks their ranges).
struct CountSizes {
  int embed_dim = 5;  // E: a digit's vector
  int att_dim = 5;    // A: the query's and keys' width, the kernel's D and the sqrt(A) in the softmax
  int hidden = 200;   // H: nn.0's outputs
};

// How a digit becomes a vector (notebook 05, "Embedding the Integers", and its "Alternatively"):
//   lookup    nn.Embedding(10, 5): "embed.weight" [10, 5]; digit d's vector is row d
//   one_hot   nn.Linear(10, 5) on one_hot(d): "embed.weight" [5, 10], "embed.bias" [5]; one_hot(d) W^T
//             is column d of W (row d of W^T), so the vector is that column plus the bias. The same
//             function of d as a lookup of W^T's rows (+ b): what differs is the bias shared by all ten
//             digits and the initial values (Linear's uniform(+-1/sqrt(10)) against Embedding's N(0, 1)).
enum class CountEmbedding { lookup, one_hot };

// The attention call's tensors for B samples (H = T = 1): q [B, D], k, v [B, S, D], weights [B, S],
// out [B, D], and their gradients of the same shapes (D = att_dim).
struct CountKernelTensors {
  int B = 0, D = 0;
  std::vector<float> q, k, v, weights, out, d_out, d_q, d_k, d_v;

  void resize(int batch, int width);
  // The kernel's arguments for samples [first, first + count).
  AttentionForward forward_args(int first, int count);
  AttentionBackward backward_args(int first, int count);
};

// label = 1 when the sequence (S digits) has more 2s than 4s.
float count_label(const std::int32_t* tokens);

class CountModel {
 public:
  static constexpr int S = CountShape::S, V = CountShape::V;

  // PyTorch's draws in its order: embed, query, WK, WV, nn.0, nn.2
  explicit CountModel(Rng& init_rng, CountEmbedding embedding = CountEmbedding::lookup, CountSizes sizes = {});
  const CountSizes& sizes() const { return sizes_; }

  ParameterList parameters();  // state_dict order, PyTorch names: query first (a module's own parameters
                               // come before its children's); embed.bias after embed.weight when one-hot
  void zero_grad();

  // The rows [first, first + count) of `tensors` that the next pass uses.
  void attach(CountKernelTensors& tensors, int first, int count);
  int rows() const { return count_; }

  // tokens [count, S], digits in [0, V): the kernel's q, k, v.
  void prepare(const std::int32_t* tokens);
  void finish_forward();  // a = out[:, 0] -> nn -> p
  // Binary cross-entropy of p against labels [count], normalised by `batch_count` (the whole batch's
  // size, when this is a shard of it), and the backward pass down to the kernel's d_out. Returns the
  // rows' summed loss.
  double loss_backward(const float* labels, double batch_count);
  void finish_backward();  // the kernel's dQ, dK, dV down to the parameters
  // The whole training pass on a CPU kernel.
  double train_pass(const std::int32_t* tokens, const float* labels, Backend backend, double batch_count);
  // The kernel's arguments for the attached rows.
  AttentionForward kernel_forward_args() { return tensors_->forward_args(first_, count_); }
  AttentionBackward kernel_backward_args() { return tensors_->backward_args(first_, count_); }
  // Forward only, for evaluation and inspection.
  void forward(const std::int32_t* tokens, Backend backend);

  // After finish_forward(), for row b of the attached rows:
  const float* weights(int b) const { return &tensors_->weights[std::size_t(first_ + b) * S]; }  // [S]
  float value(int b, int s) const { return digit_values_(tokens_[std::size_t(b) * S + s], 0); }
  float weighted(int b) const { return tensors_->out[std::size_t(first_ + b) * sizes_.att_dim]; }
  float probability(int b) const { return p_[b]; }
  const float* probabilities() const { return p_.data(); }  // [count]
  // rows whose prediction (p > 0.5) matches the label
  int correct_predictions(const float* labels) const;

  // Named parts, for the hand-built solution and the tests.
  Parameter& query() { return query_; }
  Embedding& embed() { return *embed_; }       // CountEmbedding::lookup only
  Linear& one_hot_embed() { return *one_hot_; }  // CountEmbedding::one_hot only
  CountEmbedding embedding() const { return one_hot_ ? CountEmbedding::one_hot : CountEmbedding::lookup; }
  // [V, E]: each digit's embedded vector (embed(0..9)), as of the last prepare()
  const RowMatrix& digit_vectors() const { return table_; }
  Linear& wk() { return wk_; }
  Linear& wv() { return wv_; }

 private:
  CountHead head() const;  // nn.0 and nn.2's values, for count_model_simd128.h

  // The ten digits' vectors into table_ (prepare), and their gradient d_table_ back to the parameters.
  void embed_digits();
  void embed_digits_backward();

  CountSizes sizes_;
  // Construction order is PyTorch's (the draws differ, the distributions do not). One of the two
  // embeddings exists (CountEmbedding).
  std::optional<Embedding> embed_;
  std::optional<Linear> one_hot_;
  Parameter query_;
  Linear wk_, wv_, nn0_, nn2_;

  CountKernelTensors* tensors_ = nullptr;
  int first_ = 0, count_ = 0;
  std::vector<std::int32_t> tokens_;  // [count, S]
  RowMatrix digit_keys_, digit_values_;      // [V, A], [V, 1]
  RowMatrix d_digit_keys_, d_digit_values_;  // their gradients, summed over the rows' positions
  RowMatrix d_embed_;                        // [V, E]
  RowMatrix table_, d_table_;                // [V, E] embed(0..9) and its gradient
  RowMatrix one_hots_;                       // [V, V] the identity: row d is one_hot(d)
  // [count]: the weighted value a, nn(a) = z, p = sigmoid(z), and dL/dp, dL/dz, dL/da
  std::vector<float> a_, z_, p_, d_p_, dz_, da_;
  std::vector<float> lanes_;  // count_model_simd128.h's scratch
};

}  // namespace attnlab
