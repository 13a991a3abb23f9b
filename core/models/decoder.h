// A causal decoder built from a spec (decoder_spec.h: the norm, the MLP, the positions, query and
// key/value heads, biases, the unembedding) and a table of its tensors' names (decoder_names.h): GPT-2
// is a spec and a name table on it (gpt2.h), and so is any Llama-style kind. Forward only, with the
// key/value cache (kv_cache.h) for writing. Shapes (shape.h's legend): n new tokens at positions
// past .. past+n-1, S = past + n keys, E, L, H query heads and Hkv key/value heads of D, F, V.
//
//   embeddings  x = tok[ids] (+ pos[past .. past+n) when learned)                            [n, E]
//   each block  a = Norm_attn(x);  q = a W_q (+ b_q), k = a W_k, v = a W_v (fused or three)
//               q, k turned by their positions when rotary                       q [H, n, D]
//               k, v appended to the layer's cache                               [Hkv, S, D] of [Hkv, C, D]
//               w = softmax(q k^T / sqrt D + causal mask): the kernel, query head h reading key/value
//                   head h / (H / Hkv) in place (grouped-query attention)                  [H, n, S]
//               x = x + (w v, heads merged) W_o (+ b_o)
//               x = x + MLP(Norm_ffn(x))   gelu_new: down(gelu(up));  gated_silu: down(silu(gate) * up)
//                                          (no MLP in an attention-only model; Norm is x without norms)
//   head        logits = Norm_out(x) U^T (+ b_U)   (U: tok when tied, else its own [V, E])     [n, V]
//
// A pass runs in stages around the attention kernel (staged_forward.h): begin_forward(ids) starts from
// an empty cache (the prompt), begin_step(id) appends one token; each layer is then one attention call.
// forward() and step() run the calls on a CPU backend. Each pass takes its intervention (intervention.h:
// heads switched off, activations replaced, activations captured under TransformerLens's hook names),
// which holds for that pass only. The last pass's attention, residual stream (before Norm_out, for the
// logit lens) and final states are kept for the views.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../backend.h"
#include "../layers/packed_linear.h"
#include "../layers/rotary.h"
#include "../tensor.h"
#include "checkpoint_model.h"
#include "decoder_names.h"
#include "decoder_spec.h"
#include "intervention.h"
#include "kv_cache.h"
#include "named_tensors.h"

namespace attnlab {

// A tensor the decoder of `spec` reads from a checkpoint: its name (the table's, with ".weight" or
// ".bias"), its shape as the file stores it (spec.layout), and whether it is a projection's weight
// (packed by set_linear_weight) rather than storage filled in place.
struct DecoderTensorShape {
  std::string name;
  std::vector<std::int64_t> shape;
  bool linear = false;
};
// Every tensor, in the order a loader plans them: embeddings, each layer's, the output norm, the head.
std::vector<DecoderTensorShape> decoder_tensors(const DecoderSpec& spec, const DecoderNames& names);
// The weights those tensors hold: the count a kind's memory check is on (config_json.h), from the same
// table the loader plans from, so no kind keeps a formula of its own.
std::uint64_t decoder_weight_count(const DecoderSpec& spec, const DecoderNames& names);

class Decoder : public CheckpointModel {
 public:
  // A checked spec (check_decoder_spec) and its kind's names.
  Decoder(const DecoderSpec& spec, const DecoderNames& names);

  const DecoderSpec& spec() const { return s_; }
  const DecoderNames& names() const { return names_; }

  // ---- loading (the kind's plan says which tensor goes where; names as the table spells them)
  float* storage(const std::string& canonical) override;
  // A projection's weight in the file's layout (spec().layout), packed here.
  bool set_linear_weight(const std::string& canonical, const float* w) override;
  // A 16-bit spec (spec().weights): the embeddings' 16-bit storage and the projections' 16-bit values,
  // in the spec's dtype only.
  std::uint16_t* storage_16(const std::string& canonical, const std::string& dtype) override;
  bool set_linear_weight_16(const std::string& canonical, const std::uint16_t* w, const std::string& dtype) override;
  // The bytes the weights take in memory (the page's and the benchmarks' figure).
  std::uint64_t weight_bytes() const;
  // Heads switched off: the self-attention's, [n_layer, n_head], given to each pass (Intervention).
  int ablation_layers() const override { return s_.n_layer; }
  int ablation_heads() const override { return s_.n_head; }

  // ---- passes
  // "" or what is wrong with the prompt (ids in [0, V), 1 <= T <= n_positions).
  std::string check_prompt(const std::int32_t* ids, int T) const;
  // "" or why the cache cannot take one more token `id` (a pass under way, no prompt yet, n_positions full).
  std::string check_step(std::int32_t id) const;
  // "" or what is wrong with an intervention for a pass of T tokens: a patch's layer, row or head out of
  // range, or without its source. Heads switched off were checked by their HeadAblation::set.
  std::string check_intervention(const Intervention& intervention, int T) const;
  // A checked prompt, from an empty cache; a checked token after the cache. The intervention (checked)
  // holds for this pass; its patches' sources and its capture must outlive it.
  void begin_forward(const std::int32_t* ids, int T, const Intervention& intervention = {});
  void begin_step(std::int32_t id, const Intervention& intervention = {});
  bool next_call(AttentionForward& call) override;
  void finish_call(const float* weights, const float* context) override;
  std::string check_pending() const override;
  bool computed() const { return n_ > 0 && next_layer_ == s_.n_layer; }  // the pass is finished
  // Passes begun so far: a reader of the cache (the writer) knows whether another pass ran since its own.
  std::uint64_t pass_count() const { return pass_count_; }
  // ---- patching's reruns (circuits.h): a patch at layer l, row p of a whole prompt's pass changes only
  // rows p.. of layers l.. (a causal model's rows never read later ones), so a patched run is the saved
  // pass with those alone computed again.
  struct SavedPass {
    std::vector<std::int32_t> tokens;
    KvCache cache;
    std::vector<RowMatrix> residual;
    std::vector<std::vector<float>> attention;
    RowMatrix final;
    int n = 0;
  };
  // The last pass (a computed prompt's, from position 0) as it is; restore_pass makes it the last again.
  SavedPass save_pass() const;
  void restore_pass(const SavedPass& saved);
  // "" or why the last pass cannot be rerun from `layer` at row `from`.
  std::string check_rerun(int layer, int from) const;
  // One cell of a rerun: the last pass's rows from `from` on again, with the cell's intervention.
  struct Rerun {
    int from = 0;
    Intervention intervention;
  };
  // Begins the cells (each checked by check_rerun, their interventions for the whole pass's rows) at
  // `layer` as one pass: every cell's rows go through each product together, so a weight is read once
  // for the batch rather than once a cell (what patching's grids cost beside the products' sums), and
  // each cell attends over its own copy of the keys and values (one attention call per cell and layer).
  // A cell's rows before `from`, and every layer before `layer`, are the last pass's. More than one cell
  // captures nothing, and the pass's rows are then the cells' one after the other: read them with
  // cell_logit_difference, then restore_pass before any other pass. Without a capture, the last layer
  // runs each cell's last row alone past its keys and values (the metric reads only that row), so the
  // pass's last layer and its results hold one row a cell.
  void begin_rerun(int layer, const std::vector<Rerun>& cells);
  void rerun(Backend backend, int layer, const std::vector<Rerun>& cells);
  void rerun(Backend backend, int layer, int from, const Intervention& intervention);  // one cell
  int rerun_cells() const { return int(cells_.size()); }
  // logit(a) - logit(b) at cell c's last row (the prompt's last position) of the last pass.
  double cell_logit_difference(int c, int a, int b) const;
  void forward(Backend backend, const std::int32_t* ids, int T, const Intervention& intervention = {});
  void step(Backend backend, std::int32_t id, const Intervention& intervention = {});
  // Forgets the cache's tokens from `length` on (a writer going back); the last pass's views stay.
  void truncate(int length);
  // The ids a tokenizer can write are [0, n): Qwen2.5's vocab_size is padded past its tokenizer's, and a
  // padded id has no text. Its logit is then -inf (logits(), unembed()), so the writer, the bars and the
  // logit lens never choose it. "" or what is wrong (n in [1, V]; V: every id, the default).
  std::string limit_vocabulary(int n);
  int writable_vocabulary() const { return writable_; }
  // Each rotary pair's speed in radians a token, after the config's rope_scaling ([D/2]; empty for
  // learned positions): the one table the passes turn by, which the page's rotary figure draws.
  const std::vector<float>& rotary_speeds() const { return rotary_.inv_freq(); }

  // ---- the last pass's results
  int cached() const { return int(tokens_.size()); }  // S: every token the cache holds
  const std::vector<std::int32_t>& tokens() const { return tokens_; }
  int pass_length() const { return n_; }    // n
  int pass_start() const { return past_; }  // its first position
  const std::vector<float>& attention(int layer) const { return attention_[std::size_t(layer)]; }  // [H, n, S]
  const RowMatrix& residual(int l) const { return residual_[std::size_t(l)]; }  // [n, E]: l = 0 embeddings .. L
  // Logits [V] at row t of the last pass (its last row: the next token's).
  std::vector<float> logits(int t) const;
  // Any residual row [E] through Norm_out and the unembedding (the logit lens) -> logits [V].
  std::vector<float> unembed(const float* residual) const;
  // logit(a) - logit(b) at row t of the last pass (two rows of the unembedding, not V): the circuits'
  // metric (circuits.h). a and b checked by the caller.
  double logit_difference(int t, int a, int b) const;
  // Unembedding row v as float32 [E] (the attribution's direction W_U[a] - W_U[b]).
  std::vector<float> unembedding_row(int v) const;
  // The final norm's weight and bias (bias empty for RMSNorm), and each layer's output projection bias
  // (zeros without one): what the attribution splits the logits by.
  const std::vector<float>& final_norm_weight() const { return out_norm_.weight; }
  const std::vector<float>& final_norm_bias() const { return out_norm_.bias; }
  // The unembedding's bias [V] (TransformerLens's b_U), empty without one: a constant of the attribution.
  const std::vector<float>& output_bias() const { return output_bias_; }
  std::vector<float> attention_output_bias(int layer) const;
  // Head h's output z_h W_O[h] [E] for a row z [H D] of hook_z (no bias): one head's part of hook_attn_out.
  std::vector<float> head_output(int layer, int head, const float* z_row) const;

 private:
  struct Norm {
    std::vector<float> weight, bias;  // bias empty for RMSNorm
  };
  struct Block {
    Norm attn_norm;
    PackedLinear qkv;      // fused [E -> (H + 2 Hkv) D] when the names have attn_qkv
    PackedLinear q, k, v;  // else three
    PackedLinear out;
    Norm ffn_norm;
    PackedLinear up, gate, down;  // gate: gated MLPs only
  };
  Norm make_norm() const;
  void normalize(const Norm& norm, ConstMatrixRef x, MatrixRef y) const;
  void index_tensors();
  void embed(const std::int32_t* ids, int n, const Intervention& intervention);
  // The pass's cells from `first_layer` on: their causal masks (their cache rows are in place).
  void start_rows(int first_layer);
  void project(int layer);
  void keep_last_rows(int layer);  // a rerun's last layer: each cell's last row alone, after its keys and values
  void finish_layer(int layer);  // once every cell's attention call is in merged_
  void add_mlp(int layer, RowMatrix& x);  // x += MLP(Norm_ffn(x)), its hooks kept
  void add_output_bias(std::vector<float>& logits) const;
  // A pass's rows, one cell at a time (every pass is one cell but a batched rerun's): positions
  // past .. past+n-1, in the cache's batch element `batch`, rows row0 .. row0+n-1 of the pass's
  // matrices; the cell's own intervention, and its causal mask [n, past+n] (empty when n = 1).
  struct Cell {
    int past = 0, n = 0, batch = 0, row0 = 0;
    Intervention intervention;
    std::vector<float> mask;
  };
  ActivationCache* capture() const { return cells_.size() == 1 ? cells_[0].intervention.capture : nullptr; }
  void finish_cell(int layer, const Cell& cell, const float* weights, const float* context);
  // Each cell's intervention at one site: the patches' rows put in place ([n, width] rows; z: [n, H D]).
  void patch_rows(PatchSite site, int layer, float* rows, int width) const;
  void patch_pattern(int layer, const Cell& cell, float* weights, RowMatrix& merged) const;
  void keep(const std::string& name, std::vector<int> shape, const float* values) const;
  void keep_norm(const std::string& prefix, ConstMatrixRef x, ConstMatrixRef normalized) const;
  void keep_scores(int layer) const;
  // Heads [Hh, n, D] laid out as rows [n, Hh, D] (TransformerLens's q, k, v, z order).
  static std::vector<float> head_rows(const float* heads, std::size_t head_stride, int n, int Hh, int D);

  bool holds_16_bit(const std::string& dtype) const;
  void embedding_row(int id, float* out) const;  // tok[id] as float32 [E]
  const void* unembedding() const;               // [V, E]: tok or output, float32 or 16-bit

  DecoderSpec s_;
  const DecoderNames& names_;
  RowMatrix tok_, pos_, output_;  // output_: a separate unembedding only; tok_, output_ empty when 16-bit
  std::vector<std::uint16_t> tok16_, output16_;  // a 16-bit spec's
  std::vector<Block> blocks_;
  Norm out_norm_;
  std::vector<float> output_bias_;  // [V] when spec().output_bias
  Rotary rotary_;
  NamedTensors tensors_;

  // The cache and the last pass.
  std::vector<std::int32_t> tokens_;
  KvCache cache_;
  int past_ = 0, n_ = 0;     // the first cell's first position; every cell's rows
  std::vector<Cell> cells_;
  std::vector<float> q_;     // the layer being computed: each cell's [H, n, D], one after the other
  RowMatrix merged_;         // its z [n, H D], each cell's rows written by its attention call
  std::vector<std::vector<float>> attention_;
  std::vector<RowMatrix> residual_;
  RowMatrix final_;  // Norm_out of the last residual [n, E]
  int next_layer_ = 0, next_cell_ = 0;
  bool projected_ = false;
  bool last_row_only_ = false;  // a rerun without a capture (begin_rerun)
  std::uint64_t pass_count_ = 0;
  int writable_ = 0;  // limit_vocabulary's n (set to V when built)
};

}  // namespace attnlab
