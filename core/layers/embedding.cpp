#include "embedding.h"

#include "init.h"

namespace attnlab {

Embedding::Embedding(int num_embeddings, int embedding_dim, Rng& rng)
    : weight("weight", num_embeddings, embedding_dim) {
  init_normal(weight.value, rng);
}

void Embedding::forward(const std::int32_t* ids, int n, MatrixRef out) const {
  for (int i = 0; i < n; ++i) out.row(i) = weight.value.row(ids[i]);
}

void Embedding::backward(const std::int32_t* ids, int n, ConstMatrixRef d_out) {
  for (int i = 0; i < n; ++i) weight.grad.row(ids[i]) += d_out.row(i);
}

}  // namespace attnlab
