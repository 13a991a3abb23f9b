// What the Induction lab measures of every head, from the attention patterns a of a pass over sequences
// of the repeat task (induction_task.h: a segment of k tokens whose copy starts at position c = a + k).
// For layer l and head h, with a[t, s] the weight from query position t on key position s, averaged over
// the sequences (and, within each, over the positions named):
//   previous    a[t, t-1],   t = 1 .. T-1                  attends to the token before (a previous-token head)
//   duplicate   a[t, t-k],   t = c .. c+k-1 (the copy)    attends to the earlier copy of its own token
//   induction   a[t, t-k+1], t = c .. c+k-1              attends to the token after its own token's earlier
//                                                          copy ("prefix matching", Olsson et al. 2022): the
//                                                          token that came next last time, which it then copies
//   first       a[t, 0],     t = 1 .. T-1                  attends to the start token (an "attention sink")
// The same scores as TransformerLens's and ARENA's on repeated random tokens, where the repeat is the
// whole second half; sequences without a known segment (the user's) count for previous and first only.
#pragma once

#include <vector>

#include "induction_task.h"

namespace attnlab {

struct HeadScores {
  int layers = 0, heads = 0;
  std::vector<float> previous, duplicate, induction, first;  // [L, H]
};

// patterns[l]: [B, H, T, T] of the batch's pass.
HeadScores head_scores(const std::vector<const std::vector<float>*>& patterns, int heads, const InductionBatch& batch);

// The head of the largest score in `scores` [L, H] among layers >= min_layer: its index l H + h.
int best_head(const std::vector<float>& scores, int heads, int min_layer = 0);

}  // namespace attnlab
