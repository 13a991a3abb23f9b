// The next token from a language model's logits [V], as Hugging Face's generate() chooses it:
// temperature, then top-k, then top-p (nucleus), then one draw. Temperature 0 is greedy: the argmax,
// ties to the lower id (torch.argmax's first maximum), and no random number is used.
//
//   p_i = exp(z_i / temperature) / sum_j exp(z_j / temperature)      over the kept ids only:
//   top-k keeps the k largest logits (0: all); top-p then keeps, in descending order, each id whose
//   predecessors' mass is below top_p (so at least one, and the id that crosses top_p); the rest get 0.
// Ties in the order go to the lower id, so the kept set is the same on every machine. The draw takes
// one uniform u in [0, 1) from the core's Rng and the first id, in id order, whose cumulative mass
// passes u: a seed reproduces a run bit for bit, natively and in WASM.
#pragma once

#include <string>
#include <vector>

#include "../rng.h"

namespace attnlab {

struct Sampling {
  double temperature = 1.0;  // 0: greedy
  int top_k = 0;             // 0: no limit
  double top_p = 1.0;        // 1: no limit
};

// "" or what is wrong, naming the setting.
std::string check_sampling(const Sampling& s);

// The distribution the next token is drawn from [V] (doubles: summed without float rounding).
std::vector<double> next_token_distribution(const float* logits, int V, const Sampling& s);

// One id drawn from `p` (greedy when `s` is): rng is advanced once unless greedy.
int draw_token(const std::vector<double>& p, const float* logits, const Sampling& s, Rng& rng);

struct TokenChance {
  int id;
  float probability;  // under the sampling distribution
  float logit;
};
// The k most likely ids of `p`, most likely first (ties to the lower id).
std::vector<TokenChance> top_tokens(const std::vector<double>& p, const float* logits, int k);

}  // namespace attnlab
