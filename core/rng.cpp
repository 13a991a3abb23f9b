#include "rng.h"

#include <cmath>

namespace attnlab {

Rng::Rng(std::uint64_t seed, std::uint64_t stream) {
  // pcg32_srandom_r
  increment_ = (stream << 1u) | 1u;
  state_ = 0;
  next_u32();
  state_ += seed;
  next_u32();
}

float Rng::uniform() { return float(next_u32() >> 8) * (1.0f / 16777216.0f); }

float Rng::normal() {
  if (has_spare_normal_) {
    has_spare_normal_ = false;
    return float(spare_normal_);
  }
  double u, v, s;
  do {
    u = 2.0 * (double(next_u32()) / 4294967296.0) - 1.0;
    v = 2.0 * (double(next_u32()) / 4294967296.0) - 1.0;
    s = u * u + v * v;
  } while (s >= 1.0 || s == 0.0);
  const double factor = std::sqrt(-2.0 * portable_log(s) / s);
  spare_normal_ = v * factor;
  has_spare_normal_ = true;
  return float(u * factor);
}

double portable_log(double x) {
  // x = m * 2^e with m in [sqrt(1/2), sqrt(2)); log(m) = 2 atanh(z), z = (m-1)/(m+1), |z| < 0.172.
  int e = 0;
  double m = std::frexp(x, &e);  // exact: m in [0.5, 1)
  if (m < 0.70710678118654752440) {
    m *= 2.0;
    e -= 1;
  }
  const double z = (m - 1.0) / (m + 1.0);
  const double z2 = z * z;
  // atanh(z) = z (1 + z^2/3 + z^4/5 + ...); 0.172^2 = 0.0296, so 11 terms reach below 1e-17.
  double sum = 0.0;
  for (int k = 21; k >= 1; k -= 2) sum = 1.0 / k + z2 * sum;
  const double ln2 = 0.69314718055994530942;
  return 2.0 * z * sum + double(e) * ln2;
}

}  // namespace attnlab
