// torch.optim.Adam with PyTorch's defaults and its exact update order (single-tensor path, 1.13):
//   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
//   p -= (lr / (1 - b1^t)) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
#pragma once

#include <vector>

#include "../layers/parameter.h"

namespace attnlab {

// Doubles, like the Python floats PyTorch computes with before casting to the tensor's float.
struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
};

class Adam {
 public:
  Adam(ParameterList params, AdamOptions options = {});

  void step();
  void zero_grad();
  int steps_taken() const { return t_; }

  AdamOptions options;

 private:
  ParameterList params_;
  std::vector<RowMatrix> m_, v_;
  int t_ = 0;
};

}  // namespace attnlab
