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
  // PyTorch's shape for it, where the usual rule (torch_shape_of below) is wrong: the One query lab's
  // `query` is a (1, E) parameter; TransformerLens's W_Q is [H, E, D], stored here as [H*E, D] rows.
  std::vector<int> torch_shape;

  Parameter(std::string n, int rows, int cols)
      : name(std::move(n)), value(RowMatrix::Zero(rows, cols)), grad(RowMatrix::Zero(rows, cols)) {}
  void zero_grad() { grad.setZero(); }
  std::size_t size() const { return std::size_t(value.size()); }
};

using ParameterList = std::vector<Parameter*>;

// PyTorch's shape of a parameter: its torch_shape where given, else [rows, cols] for a weight (a name
// with "weight" in it) or anything with more than one row, else [cols] (a bias).
inline std::vector<int> torch_shape_of(const Parameter& p) {
  if (!p.torch_shape.empty()) return p.torch_shape;
  if (p.value.rows() > 1 || p.name.find("weight") != std::string::npos) return {int(p.value.rows()), int(p.value.cols())};
  return {int(p.value.cols())};
}

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
