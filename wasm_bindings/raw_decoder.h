// Any decoder kind (core/models/decoder.h: GPT-2 today), callable from JS: loaded as every checkpoint
// model is (raw_checkpoint.h), then a prompt's pass (_forward on a CPU backend, or _begin_forward and
// the staged calls of raw_staged.h: one attention call per layer), cached steps, writing one token at
// a time through the one writer (core/models/writer.h: the CLI's and the page's), the head roles and
// the logit lens (decoder_probes.h). Same rules as raw_api.h: every method returns "" or a message (or
// {error}), nothing throws; the inputs are checked here, at the edge, before the core sees them.
#pragma once

#include <emscripten/val.h>

#include <memory>
#include <string>
#include <vector>

#include "models/circuits.h"
#include "models/decoder.h"
#include "models/writer.h"
#include "raw_checkpoint.h"

namespace attnlab::wasm {

class RawDecoder : public RawCheckpoint {
 public:
  // kind: a decoder kind of the registry ("gpt2").
  explicit RawDecoder(std::string kind) : RawCheckpoint(std::move(kind)) {}

  // heads: [layer, head, ...] switched off in this pass alone (null: none).
  std::string _forward(const val& ids, int backend, const val& heads);
  std::string _begin_forward(const val& ids, const val& heads);
  std::string _step(double id, int backend, const val& heads);
  int _cached() const { return decoder() ? decoder()->cached() : 0; }
  int _pass_length() const { return decoder() && decoder()->computed() ? decoder()->pass_length() : 0; }
  val _attention(int layer) const;  // [H, n, S] of the last pass (a view)
  val _residual(int layer) const;   // [n, E], layer 0 the embeddings .. L (a view)
  val _logits(int row) const;       // [V] at a row of the last pass (a copy)
  val _rotary_speeds() const;       // [D/2] radians a token, after rope_scaling (a copy; empty: learned positions)
  // The tokenizer's size n: ids from n on (a padded vocabulary's) are never chosen. "" or what is wrong.
  std::string _limit_vocabulary(int n) { return decoder() ? decoder()->limit_vocabulary(n) : "load the checkpoint first"; }

  // settings: {temperature, topK, topP, maxNewTokens, seed, stopAtEos, eosIds, top, keepLogits, headsOff};
  // "" or what is wrong.
  std::string _begin_writing(const val& ids, const val& settings, int backend);
  // {id, probability, position, top: [{id, probability, logit}], attention [L*H*(position+1)]}, or null when done.
  val _next_token();
  // The writer goes on with `settings` to `count` written tokens (Writer::write_to): {written,
  // firstChanged (the first step a reader's copy must drop), stopReason}, or {error}.
  val _write_to(const val& settings, int count);
  // Written step k's record (as _next_token gave it), or null.
  val _written_step(int k) const;
  std::string _stop_reason() const { return writer_ ? writer_->stop_reason() : "not begun"; }
  // The distribution written step `step` was drawn from (step < 0 or written(): the next token's) under
  // other settings (the temperature slider): [{id, probability, logit}] of the k most likely, or {error}.
  val _distribution(int step, double temperature, int top_k, double top_p, int k) const;
  // One id's probability in that distribution, or {error}.
  val _chance(int step, double temperature, int top_k, double top_p, int id) const;

  // {layers, heads, tokens, previous, first, induction, duplicate, firstCopyLoss, secondCopyLoss} or {error}.
  val _head_roles(int n, double seed, int backend, const val& heads);

  // ---- circuits (core/models/circuits.h)
  // One pass with its activations captured: [{name, shape, values}] under TransformerLens's hook names, or {error}.
  val _capture(const val& ids, int backend, const val& heads);
  // {layers, heads, embed, posEmbed, head [L*H], attnBias [L], mlp [L], constant, total, logitDiff} or {error}.
  val _attribute(const val& ids, const val& answer, const val& wrong, int backend);
  // Patching row by row: begin -> {cleanDiff, corruptDiff, tokens} or {error}; a row of a site's grid ->
  // Float64Array [T] or [H], or {error}; the clean run's cache as _capture gives it.
  val _patch_begin(const val& clean, const val& corrupt, const val& answer, const val& wrong, int backend);
  val _patch_row(const std::string& site, int layer);
  val _patch_clean_cache() const;
  // [[{id, probability}] per position] per layer 0..L of the last pass.
  val _logit_lens() const;

 private:
  Decoder* decoder() const { return dynamic_cast<Decoder*>(model()); }  // nullptr until loaded
  std::string read_ids(const val& ids, std::vector<std::int32_t>& out) const;
  std::string read_heads(const val& heads, Intervention& out) const;
  // The logits written step `step` was drawn from, or "" and null.
  std::string drawn_from(int step, const std::vector<float>*& out) const;
  std::unique_ptr<Writer> writer_;
  std::unique_ptr<ActivationPatcher> patcher_;
};

}  // namespace attnlab::wasm
