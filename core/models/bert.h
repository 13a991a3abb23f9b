// The BERT encoder (Devlin et al. 2019; Hugging Face's BertModel in eval mode), forward only, and the
// masked-language-model head of BertForMaskedLM. Shapes (shape.h's legend): T tokens, E hidden size,
// H heads of D = E / H, F the feed-forward width, L layers, V the vocabulary.
//
//   embeddings   h0 = LayerNorm(word[ids] + position[0..T) + token_type[types])          [T, E]
//   each layer   q, k, v = h W_q^T + b_q, ...  split into heads                           [H, T, D]
//                a = softmax(q k^T / sqrt D)   (the attention kernel, any backend)        [H, T, T]
//                c = a v, heads merged;  h' = LayerNorm(h + c W_o^T + b_o)                [T, E]
//                h'' = LayerNorm(h' + gelu(h' W_1^T + b_1) W_2^T + b_2)                   [T, E]
//   MLM head     logits = LayerNorm(gelu(h_L W_t^T + b_t)) word^T + bias                  [V]
//
// The forward runs in stages around the attention kernel (staged_forward.h), so that the kernel can run
// in JS on WebGPU: begin_forward(ids, types) embeds; then each layer is one attention call, the layer's
// q, k, v [H, T, D] with scale 1/sqrt D, whose weights [H, T, T] and context [H, T, D] finish the layer.
// forward() runs the calls on a CPU backend. Every layer's attention, queries and keys are kept for
// the views (the neuron view reads q and k); the hidden states too.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "../backend.h"
#include "../layers/packed_linear.h"
#include "../tensor.h"
#include "checkpoint_model.h"
#include "bert_config.h"

namespace attnlab {

class BertModel : public CheckpointModel {
 public:
  BertModel(const BertConfig& config, bool mlm_head, bool separate_decoder);

  const BertConfig& config() const { return c_; }
  bool has_mlm_head() const { return mlm_; }

  // ---- loading (bert_checkpoint.h's plan says which tensor goes where)
  // The float storage of a tensor kept as the file has it (embeddings, biases, LayerNorms): fill in
  // place. nullptr for a Linear weight (set_linear_weight packs those) or an unknown name.
  float* storage(const std::string& canonical) override;
  // A Linear weight [out, in] in the file's layout; false for an unknown name.
  bool set_linear_weight(const std::string& canonical, const float* w) override;
  // Heads switched off (a pass's heads_off): the encoder's, [num_hidden_layers, num_attention_heads].
  int ablation_layers() const override { return c_.num_hidden_layers; }
  int ablation_heads() const override { return c_.num_attention_heads; }

  // ---- forward
  // "" or what is wrong with the input (ids in [0, V), types in [0, type_vocab_size), 1 <= T <= max positions).
  std::string check_input(const std::int32_t* ids, const std::int32_t* types, int T) const;
  // The staged forward: embeds the (checked) input; every layer is then one call of the protocol.
  // heads_off (checked by its set() against ablation_layers() x ablation_heads()) holds for this pass
  // alone: their z zeroed before the output dense.
  void begin_forward(const std::int32_t* ids, const std::int32_t* types, int T, const HeadAblation& heads_off = {});
  bool next_call(AttentionForward& call) override;
  void finish_call(const float* weights, const float* context) override;
  std::string check_pending() const override;
  bool computed() const { return T_ > 0 && next_layer_ == c_.num_hidden_layers; }  // every layer finished
  void forward(Backend backend, const std::int32_t* ids, const std::int32_t* types, int T, const HeadAblation& heads_off = {});

  int length() const { return T_; }
  const RowMatrix& hidden_state(int l) const { return hidden_[std::size_t(l)]; }  // l = 0 (embeddings) .. L
  const std::vector<float>& attention(int layer) const { return attention_[std::size_t(layer)]; }  // [H, T, T]
  const std::vector<float>& queries(int layer) const { return queries_[std::size_t(layer)]; }      // [H, T, D]
  const std::vector<float>& keys(int layer) const { return keys_[std::size_t(layer)]; }            // [H, T, D]

  // The head's k most likely tokens at a position of the last forward, most likely first.
  struct Prediction {
    int id;
    float probability;
    float logit;
  };
  std::vector<Prediction> predict(int position, int k) const;

 private:
  struct LayerNormWeights {
    std::vector<float> weight, bias;
  };
  struct Layer {
    PackedLinear query, key, value, attention_output;
    LayerNormWeights attention_norm;
    PackedLinear intermediate, output;
    LayerNormWeights output_norm;
  };
  void index_tensors();
  void embed(const std::int32_t* ids, const std::int32_t* types, int T);
  void project(int layer);
  void finish_layer(int layer, const float* weights, const float* context);

  BertConfig c_;
  bool mlm_ = false;
  RowMatrix word_, position_, token_type_;
  LayerNormWeights embedding_norm_;
  std::vector<Layer> layers_;
  PackedLinear transform_;
  LayerNormWeights transform_norm_;
  std::vector<float> prediction_bias_;
  RowMatrix decoder_;  // [V, E] when the file has its own; else the word embeddings serve (tied)
  std::map<std::string, float*> storage_;
  std::map<std::string, PackedLinear*> linears_;
  std::map<std::string, std::size_t> sizes_;

  // Activations of the last forward.
  int T_ = 0;
  std::vector<RowMatrix> hidden_;
  std::vector<std::vector<float>> attention_, queries_, keys_;
  std::vector<float> v_;  // the values [H, T, D] of the layer being computed
  int next_layer_ = 0;    // the layer whose call is next (L: the pass is done)
  bool projected_ = false;
  HeadAblation heads_off_;  // the pass under way's (begin_forward's), replaced by the next pass's
};

}  // namespace attnlab
