// How a projection's weight is stored: nn.Linear's [out, in] (y = x W^T), or [in, out] (y = x W), as
// GPT-2's Conv1D and TransformerLens's W_in, W_out and W_U store theirs. One enum for the layers that
// train (linear.h) and the checkpoints' specs (models/decoder_spec.h).
#pragma once

namespace attnlab {

enum class WeightLayout { out_in, in_out };

}  // namespace attnlab
