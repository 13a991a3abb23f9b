// What the Writing lab measures on any decoder (decoder.h), beside what it writes:
//
// Head roles, on [bos] + r + r: r is n tokens drawn uniformly from the vocabulary (the ids a tokenizer
// writes: Decoder::limit_vocabulary) without <|endoftext|>
// (the core's Rng, seed given), bos is <|endoftext|> (as GPT-2 texts start; id 0 when the config has
// none). With a[l, h, t, s] the attention of that pass and T = 1 + 2n, for each layer and head:
//   previous   mean over t = 1 .. T-1 of a[t, t-1]               (attends to the token before)
//   first      mean over t = 1 .. T-1 of a[t, 0]                 (the "attention sink")
//   induction  mean over t in the second copy (1+n .. 2n) of a[t, t-n+1]: from each token to the token
//              after its first occurrence (Olsson et al. 2022)
//   duplicate  mean over t in the second copy of a[t, t-n]: from each token to its own first occurrence
//              (TransformerLens's duplicate-token head)
// and the model's mean next-token loss predicting r[1..n-1] inside the first copy and again inside the
// second (an induction circuit lowers the second).
//
// Logit lens (nostalgebraist 2020): each layer's residual stream [L+1, T, E] of the last pass through
// LayerNorm_f and the unembedding: the top token at every layer for every position.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../backend.h"
#include "decoder.h"

namespace attnlab {

// [bos] + r + r.
std::vector<std::int32_t> repeated_random_tokens(const DecoderSpec& c, int n, std::uint64_t seed);

struct HeadRoles {
  int layers = 0, heads = 0;
  std::vector<std::int32_t> tokens;             // [bos] + r + r
  std::vector<float> previous, first, induction, duplicate;  // [L, H]
  float first_copy_loss = 0.0f, second_copy_loss = 0.0f;
};

// "" and the scores (the model runs the sequence with `heads_off` switched off: its last pass is that),
// or why not (n < 2, or the sequence longer than n_positions).
std::string head_roles(Decoder& model, Backend backend, int n, std::uint64_t seed, const HeadAblation& heads_off, HeadRoles& out);

struct LensCell {
  int id;
  float probability;
};
// The last pass's residuals through the head: [L+1][n] cells, layer 0 the embeddings, L the model's own
// prediction.
std::vector<std::vector<LensCell>> logit_lens(const Decoder& model);

}  // namespace attnlab
