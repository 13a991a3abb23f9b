#include "attention.h"

namespace attnlab {

void attention_forward(Backend backend, const AttentionForward& a) {
  if (backend == Backend::scalar) attention_forward_scalar(a);
  else attention_forward_simd128(a);
}

void attention_backward(Backend backend, const AttentionBackward& a) {
  if (backend == Backend::scalar) attention_backward_scalar(a);
  else attention_backward_simd128(a);
}

}  // namespace attnlab
