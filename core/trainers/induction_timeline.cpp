#include "induction_timeline.h"

#include <cmath>
#include <limits>

namespace attnlab {

void InductionTimeline::add_step(double loss_sum, int count, double repeat_sum, int repeat_count, double rest_sum,
                                 int rest_count) {
  loss_sum_ += loss_sum;
  count_ += count;
  repeat_sum_ += repeat_sum;
  repeat_count_ += repeat_count;
  rest_sum_ += rest_sum;
  rest_count_ += rest_count;
}

void InductionTimeline::add_point(int step, const HeadScores& scores) {
  constexpr float kNone = std::numeric_limits<float>::quiet_NaN();
  TimelinePoint p;
  p.step = step;
  p.loss = count_ ? float(loss_sum_ / double(count_)) : kNone;
  p.repeat_loss = repeat_count_ ? float(repeat_sum_ / double(repeat_count_)) : kNone;
  p.rest_loss = rest_count_ ? float(rest_sum_ / double(rest_count_)) : kNone;
  p.scores = scores;
  loss_sum_ = repeat_sum_ = rest_sum_ = 0.0;
  count_ = repeat_count_ = rest_count_ = 0;
  points_.push_back(std::move(p));
  if (int(points_.size()) < capacity_) return;
  // Thin: keep the points whose step is a multiple of the doubled interval, and the first and last.
  every_ *= 2;
  std::vector<TimelinePoint> kept;
  for (std::size_t i = 0; i < points_.size(); ++i)
    if (i == 0 || i + 1 == points_.size() || points_[i].step % every_ == 0) kept.push_back(std::move(points_[i]));
  points_ = std::move(kept);
}

int InductionTimeline::formed_index() const {
  for (std::size_t i = 0; i < points_.size(); ++i) {
    const TimelinePoint& p = points_[i];
    if (std::isfinite(p.repeat_loss) && std::isfinite(p.rest_loss) && p.repeat_loss < 0.5f * p.rest_loss) return int(i);
  }
  return -1;
}

int InductionTimeline::phase_step() const {
  const int formed = formed_index();
  if (formed < 0) return -1;
  const int window = std::max(1, (formed + 1) / 10);
  double best_drop = -std::numeric_limits<double>::infinity();
  int best = formed;
  for (int i = 0; i + window <= formed; ++i) {
    const double drop = double(points_[std::size_t(i)].repeat_loss) - points_[std::size_t(i + window)].repeat_loss;
    if (drop > best_drop) {
      best_drop = drop;
      best = i;
    }
  }
  if (best + window > formed) return points_[std::size_t(formed)].step;
  return (points_[std::size_t(best)].step + points_[std::size_t(best + window)].step) / 2;
}

}  // namespace attnlab
