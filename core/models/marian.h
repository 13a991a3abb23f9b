// The Marian encoder-decoder (opus-mt; Hugging Face's MarianMTModel in eval mode), forward only, with a
// key/value cache, greedy decoding and beam search as generate() does them. Shapes (shape.h's legend):
// S source tokens, T target tokens, E = d_model, H heads of D = E / H, V the vocabulary, B beams.
//
//   embeddings   x = shared[ids] * sqrt(E) + sinusoid[0..n)   (positions computed: sin half, cos half)
//   encoder      h = LayerNorm(x + SelfAttention(x));  x = LayerNorm(h + fc2(silu(fc1(h))))
//   decoder      h = LayerNorm(x + CausalSelfAttention(x));  h = LayerNorm(h + CrossAttention(h, encoder));
//                x = LayerNorm(h + fc2(silu(fc1(h))))
//   logits       x shared^T + final_logits_bias        (the output projection is tied to the embeddings)
// Post-LayerNorm everywhere, no LayerNorm on the embeddings, none after the last layer (Marian's).
// Every attention goes through the kernel (attention.h) on the backend asked for.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "../backend.h"
#include "../layers/packed_linear.h"
#include "../tensor.h"
#include "checkpoint_model.h"
#include "kv_cache.h"
#include "marian_config.h"
#include "named_tensors.h"

namespace attnlab {

class MarianModel : public CheckpointModel {
 public:
  // The output projection is the shared embeddings (HF ties them; a stored lm_head.weight is a copy).
  explicit MarianModel(const MarianConfig& config);

  const MarianConfig& config() const { return c_; }

  // ---- loading (marian_checkpoint.h's plan says which tensor goes where)
  float* storage(const std::string& canonical) override;
  bool set_linear_weight(const std::string& canonical, const float* w) override;
  // Heads switched off (the heads_off of decode() and generate(), for that pass alone): the decoder's
  // cross-attention heads (the Translation lab's), [decoder_layers, decoder_heads]; the encoder and the
  // decoder's self-attention are left whole.
  int ablation_layers() const override { return c_.decoder_layers; }
  int ablation_heads() const override { return c_.decoder_heads; }

  // ---- the encoder, then a teacher-forced decoder over a whole target prefix
  // "" or what is wrong with token ids (in [0, V), at most max_position_embeddings of them).
  std::string check_ids(const char* what, const std::int32_t* ids, int n) const;
  void encode(Backend backend, const std::int32_t* ids, int S);
  int source_length() const { return encoded_ ? S_ : 0; }  // 0 until an encoder pass has finished
  const RowMatrix& encoder_output() const { return encoder_out_; }  // [S, E]
  const std::vector<float>& encoder_attention(int layer) const { return encoder_attention_[std::size_t(layer)]; }  // [H, S, S]
  // After encode(): target ids (the decoder start token first) -> logits [T, V] and every attention.
  void decode(Backend backend, const std::int32_t* target, int T, const HeadAblation& heads_off = {});
  const RowMatrix& logits() const { return logits_; }
  const std::vector<float>& decoder_attention(int layer) const { return decoder_attention_[std::size_t(layer)]; }  // [H, T, T]
  const std::vector<float>& cross_attention(int layer) const { return cross_attention_[std::size_t(layer)]; }      // [H, T, S]

  // ---- the same two passes in stages around the attention kernel (staged_forward.h), so that it can
  // run outside C++ (the page's WebGPU kernel, in JS); encode() and decode() above are these with a CPU
  // kernel. begin_encode(ids, S): one call per encoder layer (self-attention over the source); then
  // begin_decode(target, T): two per decoder layer (causal self-attention, with its [T, T] mask, then
  // cross-attention over the encoder's output). Each call: q [H, T, D], k and v [H, S, D], scale
  // 1/sqrt(D); its weights [H, T, S] and out [H, T, D] finish the stage.
  // begin_step(tokens, t): one decoding step of B beams (generate()'s), the token of each at position t
  // through the key/value cache (kv_cache.h): per decoder layer one causal self-attention call over the
  // cache in place ({B, H, 1, t + 1, D}, kv_stride apart), then one cross-attention call per beam
  // ({1, H, 1, S, D}: every beam reads the same encoder keys and values).
  enum class Pending { none, encoder_self, decoder_self, decoder_cross, step_self, step_cross };
  void begin_encode(const std::int32_t* ids, int S);
  void begin_decode(const std::int32_t* target, int T, const HeadAblation& heads_off = {});
  // After encode() and start_steps(B): tokens [B] at position t (the cache holds 0 .. t-1). Its results:
  // step_logits() [B, V], step_cross() [B][L*H*S].
  void start_steps(int beams, const HeadAblation& heads_off = {});
  void begin_step(const std::vector<int>& tokens, int t);
  const RowMatrix& step_logits() const { return step_logits_; }
  const std::vector<std::vector<float>>& step_cross() const { return step_cross_; }
  bool next_call(AttentionForward& call) override;
  void finish_call(const float* weights, const float* out) override;
  std::string check_pending() const override;
  bool decoded() const { return T_ > 0 && pending_ == Pending::none && !cross_attention_.empty() && !cross_attention_.back().empty(); }
  int target_length() const { return T_; }

  // ---- generation, after encode()
  struct BeamStep {
    std::vector<std::vector<int>> beams;  // each live beam's ids after this step (decoder start first)
    std::vector<float> scores;            // their summed log-probabilities
    std::vector<int> finished;            // the beams whose next token was </s> at this step
  };
  struct Generation {
    std::vector<int> ids;               // decoder start token, the generated tokens, </s> when it was reached
    float score = 0.0f;                 // summed log-probability / length^length_penalty (beam search)
    std::vector<std::vector<float>> cross;  // per generated token: its cross-attention [L][H][S], flattened
    std::vector<BeamStep> steps;        // beam search only: the beams at each step
  };
  // num_beams 1: greedy. The config's bad words are banned at every step; stops at </s> or max_length.
  Generation generate(Backend backend, int num_beams, int max_length, const HeadAblation& heads_off = {});

 private:
  struct Attention {
    PackedLinear q, k, v, out;
  };
  using Norm = LayerNormWeights;
  struct EncoderLayer {
    Attention self;
    Norm self_norm;
    PackedLinear fc1, fc2;
    Norm final_norm;
  };
  struct DecoderLayer {
    Attention self;
    Norm self_norm;
    Attention cross;
    Norm cross_norm;
    PackedLinear fc1, fc2;
    Norm final_norm;
  };
  // A stage's kernel call, heads first: q [H, T, D], k and v [H, S, D], mask [T, S] (the same for every
  // head; null for none).
  struct StagedAttention {
    int H = 0, T = 0, S = 0, D = 0;
    const float* q = nullptr;
    const float* k = nullptr;
    const float* v = nullptr;
    const float* mask = nullptr;
    int B = 1;                   // a step's self-attention: its beams
    std::size_t kv_stride = 0;   // the cache's (AttentionForward::kv_stride)
  };
  StagedAttention encoder_project(int layer);
  void encoder_finish(int layer, const float* weights, const float* out);
  StagedAttention decoder_project_self(int layer);
  void decoder_finish_self(int layer, const float* weights, const float* out);
  StagedAttention decoder_project_cross(int layer);
  void decoder_finish_cross(int layer, const float* weights, const float* out);
  StagedAttention step_project_self(int layer);
  void step_finish_self(int layer, const float* weights, const float* out);
  StagedAttention step_project_cross(int layer, int beam);
  void step_finish_cross(int layer, int beam, const float* weights, const float* out);
  void index_tensors();
  void embed(const std::int32_t* ids, int n, int first_position, RowMatrix& x) const;
  void feed_forward(const PackedLinear& fc1, const PackedLinear& fc2, const Norm& norm, RowMatrix& x) const;
  void project_logits(ConstMatrixRef x, RowMatrix& logits) const;
  StagedAttention staged(int H, int T, int S, const float* k, const float* v, const float* mask) const;
  // q, k, v of stage_x_ through a self-attention's projections, split into heads: the call's inputs.
  StagedAttention project_self_attention(const Attention& attention, int H, const float* mask);
  // stage_x_ = LayerNorm(stage_x_ + out_proj(out merged from [H, N, D])): the end of an attention block.
  // ablated_layer: a cross-attention's decoder layer, whose heads switched off are zeroed first (-1: none).
  void attend_output(const Attention& attention, const Norm& norm, const float* out, int H, int D, int ablated_layer = -1);
  void next_stage(Pending first, int layer, int layers);

  MarianConfig c_;
  // The shared embeddings [V, E] packed once as the output projection (x shared^T + final_logits_bias,
  // its bias), the product of every decoding step; embed() reads a token's row back from the panels.
  PackedLinear output_;
  RowMatrix positions_;  // [max_positions, E], computed
  std::vector<EncoderLayer> encoder_;
  std::vector<DecoderLayer> decoder_;
  NamedTensors tensors_;

  int S_ = 0, T_ = 0;
  RowMatrix encoder_out_, logits_;
  // The staged passes' state: the hidden states so far [S or T, E], the current call's heads, the causal
  // mask [T, T], and which stage comes next.
  RowMatrix stage_x_;
  std::vector<float> stage_q_, stage_k_, stage_v_, causal_;
  Pending pending_ = Pending::none;
  int pending_layer_ = 0, pending_beam_ = 0;
  bool projected_ = false, encoded_ = false;
  HeadAblation heads_off_;  // the cross heads off in the decoding under way (begin_decode's, start_steps'), only
  StagedAttention call_;  // the projected stage's call (valid while projected_)
  std::vector<std::vector<float>> encoder_attention_, decoder_attention_, cross_attention_;
  std::vector<std::vector<float>> cross_k_, cross_v_;  // per decoder layer: the encoder output's keys, values [H, S, D]
  KvCache cache_;  // the decoder's self-attention keys and values: per layer [B, H, C, D]
  int step_position_ = 0;
  RowMatrix step_context_, step_logits_;  // a step's merged heads [B, E] and its logits [B, V]
  std::vector<std::vector<float>> step_cross_;  // [B][L*H*S]
};

}  // namespace attnlab
