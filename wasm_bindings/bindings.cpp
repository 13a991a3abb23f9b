// Embind declarations only: value types and enums first, then classes, then functions. Every raw entry
// has a '_' prefix; wasm_bindings/attnlab.js wraps them into the documented API (docs/api.md).
#include <emscripten/bind.h>

#include "backend.h"
#include "raw_api.h"
#include "raw_kernel.h"
#include "raw_lookup.h"
#include "raw_trainers.h"
#include "simd_peak.h"

using namespace emscripten;
using namespace attnlab;
using namespace attnlab::wasm;

EMSCRIPTEN_BINDINGS(attnlab) {
  register_vector<std::string>("_StringVector");

  // Shared with web/backends.js; tests/node/enums.test.mjs checks both agree.
  enum_<Backend>("_Backend")
      .value("scalar", Backend::scalar)
      .value("simd128", Backend::simd128)
      .value("webgpu", Backend::webgpu);

  class_<RawLayer>("_RawLayer")
      .function("_parameter_names", &RawLayer::_parameter_names)
      .function("_parameter", &RawLayer::_parameter)
      .function("_gradient", &RawLayer::_gradient)
      .function("_parameter_shape", &RawLayer::_parameter_shape)
      .function("_set_parameter", &RawLayer::_set_parameter)
      .function("_zero_grad", &RawLayer::_zero_grad);

  class_<RawEmbedding, base<RawLayer>>("_RawEmbedding")
      .constructor<int, int, std::uint32_t>()
      .class_function("_config_error", &RawEmbedding::_config_error)
      .function("_forward", &RawEmbedding::_forward)
      .function("_backward", &RawEmbedding::_backward)
      .function("_output", &RawEmbedding::_output);

  class_<RawLinear, base<RawLayer>>("_RawLinear")
      .constructor<int, int, std::uint32_t, bool>()
      .class_function("_config_error", &RawLinear::_config_error)
      .function("_forward", &RawLinear::_forward)
      .function("_backward", &RawLinear::_backward)
      .function("_output", &RawLinear::_output)
      .function("_d_input", &RawLinear::_d_input);

  class_<RawMultiheadAttention, base<RawLayer>>("_RawMultiheadAttention")
      .constructor<int, int, std::uint32_t>()
      .class_function("_config_error", &RawMultiheadAttention::_config_error)
      .function("_forward", &RawMultiheadAttention::_forward)
      .function("_backward", &RawMultiheadAttention::_backward)
      .function("_output", &RawMultiheadAttention::_output)
      .function("_weights", &RawMultiheadAttention::_weights)
      .function("_weights_mean", &RawMultiheadAttention::_weights_mean)
      .function("_d_query", &RawMultiheadAttention::_d_query)
      .function("_d_key", &RawMultiheadAttention::_d_key)
      .function("_d_value", &RawMultiheadAttention::_d_value);

  class_<RawAlignmentTrainer, base<RawLayer>>("_RawAlignmentTrainer")
      .constructor<val>()
      .class_function("_config_error", &RawAlignmentTrainer::_config_error)
      .class_function("_defaults", &RawAlignmentTrainer::_defaults)
      .class_function("_training_bytes", &RawAlignmentTrainer::_training_bytes)
      .function("_train", &RawAlignmentTrainer::_train)
      .function("_metrics", &RawAlignmentTrainer::_metrics)
      .function("_steps_done", &RawAlignmentTrainer::_steps_done)
      .function("_set_lr", &RawAlignmentTrainer::_set_lr)
      .function("_config", &RawAlignmentTrainer::_config)
      .function("_begin_step", &RawAlignmentTrainer::_begin_step)
      .function("_middle_step", &RawAlignmentTrainer::_middle_step)
      .function("_end_step", &RawAlignmentTrainer::_end_step)
      .function("_kernel_shape", &RawAlignmentTrainer::_kernel_shape)
      .function("_kernel_view", &RawAlignmentTrainer::_kernel_view)
      .function("_run_kernel_forward", &RawAlignmentTrainer::_run_kernel_forward)
      .function("_run_kernel_backward", &RawAlignmentTrainer::_run_kernel_backward)
      .function("_evaluate", &RawAlignmentTrainer::_evaluate)
      .function("_inspect", &RawAlignmentTrainer::_inspect)
      .function("_inspection", &RawAlignmentTrainer::_inspection)
      .function("_fixed_sample", &RawAlignmentTrainer::_fixed_sample);

  class_<RawDigits>("_RawDigits")
      .constructor<>()
      .function("_load", &RawDigits::_load)
      .function("_count", &RawDigits::_count)
      .function("_images", &RawDigits::_images);

  class_<RawLookupTrainer, base<RawLayer>>("_RawLookupTrainer")
      .constructor<val, const RawDigits&>()
      .class_function("_config_error", &RawLookupTrainer::_config_error)
      .class_function("_defaults", &RawLookupTrainer::_defaults)
      .function("_train", &RawLookupTrainer::_train)
      .function("_metrics", &RawLookupTrainer::_metrics)
      .function("_steps_done", &RawLookupTrainer::_steps_done)
      .function("_epoch", &RawLookupTrainer::_epoch)
      .function("_set_lr", &RawLookupTrainer::_set_lr)
      .function("_config", &RawLookupTrainer::_config)
      .function("_begin_step", &RawLookupTrainer::_begin_step)
      .function("_middle_step", &RawLookupTrainer::_middle_step)
      .function("_end_step", &RawLookupTrainer::_end_step)
      .function("_kernel_shape", &RawLookupTrainer::_kernel_shape)
      .function("_kernel_view", &RawLookupTrainer::_kernel_view)
      .function("_run_kernel_forward", &RawLookupTrainer::_run_kernel_forward)
      .function("_run_kernel_backward", &RawLookupTrainer::_run_kernel_backward)
      .function("_evaluate", &RawLookupTrainer::_evaluate)
      .function("_inspect", &RawLookupTrainer::_inspect)
      .function("_inspection", &RawLookupTrainer::_inspection)
      .function("_images", &RawLookupTrainer::_images);

  class_<RawAdam>("_RawAdam")
      .constructor<val>()
      .class_function("_options_error", &RawAdam::_options_error)
      .function("_add", &RawAdam::_add)
      .function("_step", &RawAdam::_step)
      .function("_zero_grad", &RawAdam::_zero_grad)
      .function("_steps_taken", &RawAdam::_steps_taken)
      .function("_set_lr", &RawAdam::_set_lr);

  class_<RawRng>("_RawRng")
      .constructor<double>()
      .function("_next_u32", &RawRng::_next_u32)
      .function("_below", &RawRng::_below)
      .function("_uniform", &RawRng::_uniform)
      .function("_normal", &RawRng::_normal);

  function("_relu", &_relu);
  function("_relu_backward", &_relu_backward);
  function("_sigmoid", &_sigmoid);
  function("_sigmoid_backward", &_sigmoid_backward);
  function("_cross_entropy", &_cross_entropy);
  function("_binary_cross_entropy", &_binary_cross_entropy);
  function("_mse", &_mse);
  function("_result", &_result);
  function("_result_grad", &_result_grad);
  function("_result_loss", &_result_loss);
  function("_version", &_version);
  function("_backends", &_backends);
  function("_simd128_native", &_simd128_native);
  function("_select_backend", &_select_backend);
  function("_heap_bytes_in_use", &_heap_bytes_in_use);
  function("_worker_threads", &_worker_threads);
  function("_set_active_worker_threads", &_set_active_worker_threads);

  function("_attention_forward", &_attention_forward);
  function("_attention_backward", &_attention_backward);
  function("_kernel_weights", &_kernel_weights);
  function("_kernel_out", &_kernel_out);
  function("_kernel_d_q", &_kernel_d_q);
  function("_kernel_d_k", &_kernel_d_k);
  function("_kernel_d_v", &_kernel_d_v);
  function("_simd128_peak_gflops", &simd128_peak_gflops);
}
