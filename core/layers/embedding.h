// nn.Embedding: ids [N] -> rows of weight [num_embeddings, E].
#pragma once

#include <cstdint>

#include "../rng.h"
#include "parameter.h"

namespace attnlab {

class Embedding {
 public:
  Embedding(int num_embeddings, int embedding_dim, Rng& rng);

  int num_embeddings() const { return int(weight.value.rows()); }
  int embedding_dim() const { return int(weight.value.cols()); }

  // out [N, E] = weight[ids]. ids must be in [0, num_embeddings) (validate_token_ids).
  void forward(const std::int32_t* ids, int n, MatrixRef out) const;
  // weight.grad[ids[i]] += d_out[i]: the transpose of the gather above.
  void backward(const std::int32_t* ids, int n, ConstMatrixRef d_out);

  ParameterList parameters() { return {&weight}; }

  Parameter weight;
};

}  // namespace attnlab
