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

// Every model's parameter lists, handled alike (the shard copies of a model list theirs in one order).
inline void zero_grads(const ParameterList& params) {
  for (Parameter* p : params) p->zero_grad();
}
// to[i].value = from[i].value
inline void copy_values(const ParameterList& from, const ParameterList& to) {
  for (std::size_t i = 0; i < from.size(); ++i) to[i]->value = from[i]->value;
}
// to[i].grad += from[i].grad
inline void add_grads(const ParameterList& from, const ParameterList& to) {
  for (std::size_t i = 0; i < from.size(); ++i) to[i]->grad += from[i]->grad;
}

}  // namespace attnlab
