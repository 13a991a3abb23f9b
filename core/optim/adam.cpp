#include "adam.h"

#include <cmath>

namespace attnlab {

Adam::Adam(ParameterList params, AdamOptions opts) : options(opts), params_(std::move(params)) {
  for (Parameter* p : params_) {
    m_.push_back(RowMatrix::Zero(p->value.rows(), p->value.cols()));
    v_.push_back(RowMatrix::Zero(p->value.rows(), p->value.cols()));
  }
}

void Adam::step() {
  ++t_;
  // PyTorch computes the bias corrections in Python floats (double) and applies them as float.
  const double bias_correction1 = 1.0 - std::pow(options.beta1, t_);
  const double bias_correction2 = 1.0 - std::pow(options.beta2, t_);
  const float step_size = float(options.lr / bias_correction1);
  const float bias_correction2_sqrt = float(std::sqrt(bias_correction2));
  const float beta1 = float(options.beta1), beta2 = float(options.beta2);
  const float one_minus_beta1 = float(1.0 - options.beta1);
  const float one_minus_beta2 = float(1.0 - options.beta2);
  const float eps = float(options.eps), weight_decay = float(options.weight_decay);
  for (std::size_t i = 0; i < params_.size(); ++i) {
    Parameter& p = *params_[i];
    RowMatrix g = p.grad;
    if (weight_decay != 0.0f) g += weight_decay * p.value;
    m_[i] = m_[i] * beta1 + g * one_minus_beta1;
    v_[i] = v_[i] * beta2 + g.cwiseProduct(g) * one_minus_beta2;
    const RowMatrix denom =
        ((v_[i].array().sqrt() / bias_correction2_sqrt) + eps).matrix();
    p.value.array() -= step_size * (m_[i].array() / denom.array());
  }
}

void Adam::zero_grad() {
  for (Parameter* p : params_) p->zero_grad();
}

}  // namespace attnlab
