// Embind declarations only: value types and enums first, then classes, then functions. Every raw entry
// has a '_' prefix; wasm_bindings/attnlab.js wraps them into the documented API (docs/api.md).
#include <emscripten/bind.h>

#include "backend.h"
#include "raw_api.h"
#include "raw_kernel.h"
#include "raw_bert.h"
#include "raw_decoder.h"
#include "raw_checkpoint.h"
#include "raw_marian.h"
#include "raw_scaled.h"
#include "raw_torch_file.h"
#include "raw_digits.h"
#include "raw_trainer.h"
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

  // Every checkpoint model: the one loader and the staged calls, bound once (raw_checkpoint.h).
  auto raw_checkpoint = class_<RawCheckpoint>("_RawCheckpoint");
  raw_checkpoint
      .function("_open", &RawCheckpoint::_open)
      .function("_open_sharded", &RawCheckpoint::_open_sharded)
      .function("_index_reads", &RawCheckpoint::_index_reads)
      .function("_index_file", &RawCheckpoint::_index_file)
      .function("_file_names", &RawCheckpoint::_file_names)
      .function("_index_give", &RawCheckpoint::_index_give)
      .function("_plan", &RawCheckpoint::_plan)
      .function("_load_count", &RawCheckpoint::_load_count)
      .function("_load", &RawCheckpoint::_load)
      .function("_write", &RawCheckpoint::_write)
      .function("_store", &RawCheckpoint::_store)
      .function("_finish", &RawCheckpoint::_finish)
      .function("_summary", &RawCheckpoint::_summary)
      .function("_head_grid", &RawCheckpoint::_head_grid);
  bind_staged(raw_checkpoint);

  class_<RawBert, base<RawCheckpoint>>("_RawBert")
      .constructor<std::string>()
      .function("_forward", &RawBert::_forward)
      .function("_begin_forward", &RawBert::_begin_forward)
      .function("_length", &RawBert::_length)
      .function("_attention", &RawBert::_attention)
      .function("_queries", &RawBert::_queries)
      .function("_keys", &RawBert::_keys)
      .function("_hidden", &RawBert::_hidden)
      .function("_predict", &RawBert::_predict);

  class_<RawMarian, base<RawCheckpoint>>("_RawMarian")
      .constructor<>()
      .function("_encode", &RawMarian::_encode)
      .function("_decode", &RawMarian::_decode)
      .function("_generate", &RawMarian::_generate)
      .function("_begin_encode", &RawMarian::_begin_encode)
      .function("_begin_decode", &RawMarian::_begin_decode)
      .function("_encoder_attention", &RawMarian::_encoder_attention)
      .function("_decoder_attention", &RawMarian::_decoder_attention)
      .function("_cross_attention", &RawMarian::_cross_attention)
      .function("_logits", &RawMarian::_logits);

  class_<RawDecoder, base<RawCheckpoint>>("_RawDecoder")
      .constructor<std::string>()
      .function("_forward", &RawDecoder::_forward)
      .function("_begin_forward", &RawDecoder::_begin_forward)
      .function("_step", &RawDecoder::_step)
      .function("_cached", &RawDecoder::_cached)
      .function("_pass_length", &RawDecoder::_pass_length)
      .function("_attention", &RawDecoder::_attention)
      .function("_residual", &RawDecoder::_residual)
      .function("_logits", &RawDecoder::_logits)
      .function("_rotary_speeds", &RawDecoder::_rotary_speeds)
      .function("_limit_vocabulary", &RawDecoder::_limit_vocabulary)
      .function("_begin_writing", &RawDecoder::_begin_writing)
      .function("_next_token", &RawDecoder::_next_token)
      .function("_write_to", &RawDecoder::_write_to)
      .function("_written_step", &RawDecoder::_written_step)
      .function("_stop_reason", &RawDecoder::_stop_reason)
      .function("_distribution", &RawDecoder::_distribution)
      .function("_chance", &RawDecoder::_chance)
      .function("_head_roles", &RawDecoder::_head_roles)
      .function("_logit_lens", &RawDecoder::_logit_lens)
      .function("_capture", &RawDecoder::_capture)
      .function("_attribute", &RawDecoder::_attribute)
      .function("_patch_begin", &RawDecoder::_patch_begin)
      .function("_patch_row", &RawDecoder::_patch_row)
      .function("_patch_clean_cache", &RawDecoder::_patch_clean_cache);

  auto raw_self_attention = class_<RawSelfAttention, base<RawLayer>>("_RawSelfAttention");
  raw_self_attention
      .constructor<int, float, std::uint32_t>()
      .class_function("_config_error", &RawSelfAttention::_config_error)
      .function("_begin", &RawSelfAttention::_begin)
      .function("_queries", &RawSelfAttention::_queries)
      .function("_keys", &RawSelfAttention::_keys)
      .function("_values", &RawSelfAttention::_values)
      .function("_weights", &RawSelfAttention::_weights)
      .function("_output", &RawSelfAttention::_output)
      .function("_scale", &RawSelfAttention::_scale);
  bind_staged(raw_self_attention);

  // A small state_dict saved with torch.save, read whole (raw_torch_file.h).
  class_<RawTorchFile>("_RawTorchFile")
      .constructor<>()
      .function("_read", &RawTorchFile::_read)
      .function("_count", &RawTorchFile::_count)
      .function("_name", &RawTorchFile::_name)
      .function("_dtype", &RawTorchFile::_dtype)
      .function("_shape", &RawTorchFile::_shape)
      .function("_floats", &RawTorchFile::_floats)
      .function("_numbers", &RawTorchFile::_numbers);

  class_<RawDigits>("_RawDigits")
      .constructor<>()
      .function("_load", &RawDigits::_load)
      .function("_count", &RawDigits::_count)
      .function("_images", &RawDigits::_images);

  // Every lab's trainer (core/trainers/registry.h), by id.
  auto raw_trainer = class_<RawTrainer, base<RawLayer>>("_RawTrainer");
  raw_trainer
      .constructor<std::string, std::string, const RawDigits*>(allow_raw_pointers())
      .class_function("_config_error", &RawTrainer::_config_error, allow_raw_pointers())
      .class_function("_defaults", &RawTrainer::_defaults)
      .class_function("_training_bytes", &RawTrainer::_training_bytes)
      .class_function("_trainer_ids", &RawTrainer::_trainer_ids)
      .function("_train", &RawTrainer::_train)
      .function("_metrics", &RawTrainer::_metrics)
      .function("_steps_done", &RawTrainer::_steps_done)
      .function("_epoch", &RawTrainer::_epoch)
      .function("_set_lr", &RawTrainer::_set_lr)
      .function("_config", &RawTrainer::_config)
      .function("_begin_step", &RawTrainer::_begin_step)
      .function("_end_step", &RawTrainer::_end_step)
      .function("_evaluate", &RawTrainer::_evaluate)
      .function("_inspect", &RawTrainer::_inspect)
      .function("_data", &RawTrainer::_data)
      .function("_set_data", &RawTrainer::_set_data)
      .function("_result", &RawTrainer::_result)
      .function("_blob", &RawTrainer::_blob)
      .function("_release", &RawTrainer::_release);
  bind_staged(raw_trainer);  // the staged step's forward and backward calls (core/trainers/staged_step.h)

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
  function("_model_kinds", &_model_kinds);
  function("_check_config", &_check_config);
  function("_unread_architecture", &_unread_architecture);
  function("_backends", &_backends);
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
  function("_attention_score_stages", &_attention_score_stages);
  function("_stage_scores", &_stage_scores);
  function("_stage_scaled", &_stage_scaled);
  function("_stage_masked", &_stage_masked);
  function("_row_entropies", &_row_entropies);
  function("_entropies", &_entropies);
}
