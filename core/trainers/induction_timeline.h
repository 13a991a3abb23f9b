// The Induction lab's run as its timeline figure draws it, kept by the trainer so that the page and the
// CLI read one history and one phase-change step. A point every `every` steps: the training loss over
// the steps since the point before (all targets, the repeat's and the rest's: induction_task.h), and
// every head's scores on the probe sequences at that step (induction_scores.h).
//
// Bounded however long a run goes: at `capacity` points every other point is dropped (the first and
// the last stay) and `every` doubles, so a run of any length keeps at most `capacity` points spread
// over all of it.
//
// The phase change (Olsson et al. 2022: induction heads form in a sudden drop of the loss on repeated
// text, while the rest of the loss barely moves): once the repeat's loss is below half the rest's, the
// step where the repeat's loss fell fastest before that, the largest drop between two points `window`
// apart (a tenth of the points recorded up to then, at least one), at the middle of that window.
// Before then there is none (-1).
#pragma once

#include <vector>

#include "induction_scores.h"

namespace attnlab {

struct TimelinePoint {
  int step = 0;
  float loss = 0.0f, repeat_loss = 0.0f, rest_loss = 0.0f;  // repeat, rest: NaN where the data has no repeat
  HeadScores scores;
};

class InductionTimeline {
 public:
  explicit InductionTimeline(int capacity = 512, int every = 10) : capacity_(capacity), every_(every) {}

  // One training step's loss sums and their counts (repeat and rest: 0 counts where unknown).
  void add_step(double loss_sum, int count, double repeat_sum, int repeat_count, double rest_sum, int rest_count);
  // True when the step just done ends an interval: add_point is then due.
  bool point_due(int step) const { return step % every_ == 0; }
  // The point at `step`: the steps' mean losses since the last point, and the probe's scores.
  void add_point(int step, const HeadScores& scores);

  const std::vector<TimelinePoint>& points() const { return points_; }
  int every() const { return every_; }
  // The phase change's step (see above), or -1.
  int phase_step() const;
  // The first point at which the repeat's loss is below half the rest's, or -1.
  int formed_index() const;

 private:
  int capacity_, every_;
  std::vector<TimelinePoint> points_;
  double loss_sum_ = 0.0, repeat_sum_ = 0.0, rest_sum_ = 0.0;
  long count_ = 0, repeat_count_ = 0, rest_count_ = 0;
};

}  // namespace attnlab
