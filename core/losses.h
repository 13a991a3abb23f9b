// Losses, each returning the mean loss and writing dL/d(input) for that mean.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tensor.h"

namespace attnlab {

// F.cross_entropy(logits [N, C], targets [N]) averaged over the N rows (tokens).
// d_logits = (softmax(logits) - onehot(targets)) / N.
float cross_entropy(ConstMatrixRef logits, const std::int32_t* targets, RowMatrix* d_logits);
// The same for one shard of a batch of `token_count` rows: returns the shard's summed loss, and
// d_logits = (softmax(logits) - onehot(targets)) / token_count, so the shards' gradients add up to
// the whole batch's. row_losses, where given, gets each row's loss [N].
double cross_entropy_sum(ConstMatrixRef logits, const std::int32_t* targets, RowMatrix* d_logits,
                         double token_count, float* row_losses = nullptr);

// F.binary_cross_entropy(p, y): p are probabilities in [0, 1]; like PyTorch each log is clamped at
// -100 and the gradient divides by max(p (1 - p), 1e-12).
float binary_cross_entropy(ConstMatrixRef p, ConstMatrixRef y, RowMatrix* d_p);
// The same for one shard of a batch of `count` elements: returns the shard's summed loss (in double),
// and d_p = (p - y) / max(p (1 - p), 1e-12) / count, so the shards' gradients add up to the batch's.
// p, y, d_p: n floats each (d_p may be nullptr).
double binary_cross_entropy_sum(const float* p, const float* y, std::size_t n, float* d_p, double count);

// F.mse_loss(pred, target): mean of squared differences; d_pred = 2 (pred - target) / n.
float mse(ConstMatrixRef pred, ConstMatrixRef target, RowMatrix* d_pred);

}  // namespace attnlab
