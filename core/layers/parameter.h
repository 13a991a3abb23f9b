// A trainable tensor, its gradient and its PyTorch name (so state_dicts map one to one).
// Vectors (biases) are stored as 1 x N matrices.
#pragma once

#include <string>
#include <vector>

#include "../tensor.h"

namespace attnlab {

struct Parameter {
  std::string name;
  RowMatrix value;
  RowMatrix grad;
  // PyTorch's number of dimensions for it, where the usual rule (a weight is 2-D, anything else with
  // one row is 1-D) is wrong: the One query lab's `query` is a (1, E) parameter.
  int torch_dims = 0;

  Parameter(std::string n, int rows, int cols)
      : name(std::move(n)), value(RowMatrix::Zero(rows, cols)), grad(RowMatrix::Zero(rows, cols)) {}
  void zero_grad() { grad.setZero(); }
  std::size_t size() const { return std::size_t(value.size()); }
};

using ParameterList = std::vector<Parameter*>;

}  // namespace attnlab
