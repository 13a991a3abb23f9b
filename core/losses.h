// Losses, each returning the mean loss and writing dL/d(input) for that mean.
#pragma once

#include <cstdint>

#include "tensor.h"

namespace attnlab {

// F.cross_entropy(logits [N, C], targets [N]) averaged over the N rows (tokens).
// d_logits = (softmax(logits) - onehot(targets)) / N.
float cross_entropy(ConstMatrixRef logits, const std::int32_t* targets, RowMatrix* d_logits);
// The same for one shard of a batch of `token_count` rows: returns the shard's summed loss, and
// d_logits = (softmax(logits) - onehot(targets)) / token_count, so the shards' gradients add up to
// the whole batch's.
double cross_entropy_sum(ConstMatrixRef logits, const std::int32_t* targets, RowMatrix* d_logits,
                         double token_count);

// F.binary_cross_entropy(p, y): p are probabilities in [0, 1]; like PyTorch each log is clamped at
// -100 and the gradient divides by max(p (1 - p), 1e-12).
float binary_cross_entropy(ConstMatrixRef p, ConstMatrixRef y, RowMatrix* d_p);

// F.mse_loss(pred, target): mean of squared differences; d_pred = 2 (pred - target) / n.
float mse(ConstMatrixRef pred, ConstMatrixRef target, RowMatrix* d_pred);

}  // namespace attnlab
