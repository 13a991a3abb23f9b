#include "decoder_names.h"

namespace attnlab {

namespace {

using T = DecoderTensor;

// One row per kind. GPT-2's names are those of the gpt2 repository's file (GPT2LMHeadModel's save adds
// "transformer.", which gpt2_checkpoint.cpp finds); its unembedding is wte (tied).
const DecoderNames kGpt2 = {"gpt2",
                            {{T::token_embd, "wte"},
                             {T::pos_embd, "wpe"},
                             {T::attn_norm, "h.%d.ln_1"},
                             {T::attn_qkv, "h.%d.attn.c_attn"},
                             {T::attn_out, "h.%d.attn.c_proj"},
                             {T::ffn_norm, "h.%d.ln_2"},
                             {T::ffn_up, "h.%d.mlp.c_fc"},
                             {T::ffn_down, "h.%d.mlp.c_proj"},
                             {T::output_norm, "ln_f"}}};

// Llama's (LlamaForCausalLM; Qwen2, Mistral and others share them): the shape the next kinds take, and
// the one the decoder's own tests build (tests/fixtures/make_decoder_fixtures.py).
const DecoderNames kLlama = {"llama",
                             {{T::token_embd, "model.embed_tokens"},
                              {T::attn_norm, "model.layers.%d.input_layernorm"},
                              {T::attn_q, "model.layers.%d.self_attn.q_proj"},
                              {T::attn_k, "model.layers.%d.self_attn.k_proj"},
                              {T::attn_v, "model.layers.%d.self_attn.v_proj"},
                              {T::attn_out, "model.layers.%d.self_attn.o_proj"},
                              {T::ffn_norm, "model.layers.%d.post_attention_layernorm"},
                              {T::ffn_gate, "model.layers.%d.mlp.gate_proj"},
                              {T::ffn_up, "model.layers.%d.mlp.up_proj"},
                              {T::ffn_down, "model.layers.%d.mlp.down_proj"},
                              {T::output_norm, "model.norm"},
                              {T::output, "lm_head"}}};

// Qwen2's (Qwen2ForCausalLM) are Llama's; its own row, so that the kind's table is found by its id.
const DecoderNames kQwen2 = {"qwen2", kLlama.names};

// A TransformerLens HookedTransformer (hooked_transformer.h) as web/models/hooked_transformer.js lays it
// out: TransformerLens's module names, each weight of [H, E, D] merged into one projection [E, H D] (W_O:
// [H D, E]), W_U as [V, E]; an attention-only model or one without norms has no rows for them (the spec
// leaves them out).
const DecoderNames kHookedTransformer = {"hooked_transformer",
                                         {{T::token_embd, "embed.W_E"},
                                          {T::pos_embd, "pos_embed.W_pos"},
                                          {T::attn_norm, "blocks.%d.ln1"},
                                          {T::attn_q, "blocks.%d.attn.Q"},
                                          {T::attn_k, "blocks.%d.attn.K"},
                                          {T::attn_v, "blocks.%d.attn.V"},
                                          {T::attn_out, "blocks.%d.attn.O"},
                                          {T::ffn_norm, "blocks.%d.ln2"},
                                          {T::ffn_up, "blocks.%d.mlp.in"},
                                          {T::ffn_down, "blocks.%d.mlp.out"},
                                          {T::output_norm, "ln_final"},
                                          {T::output, "unembed"}}};

#ifdef ATTNLAB_TEST_DECODER_KIND
// The test module's kind only (CMakeLists.txt: attnlab-test-kind; model_kinds.cpp has its row): Llama's
// roles under names no real checkpoint spells, so that tests/node/decoder_kind_rows.test.mjs loads a folder
// only by this row.
const DecoderNames kTestDecoder = {"test_decoder",
                                   {{T::token_embd, "tok_embed"},
                                    {T::attn_norm, "blocks.%d.attn_norm"},
                                    {T::attn_q, "blocks.%d.attn.q"},
                                    {T::attn_k, "blocks.%d.attn.k"},
                                    {T::attn_v, "blocks.%d.attn.v"},
                                    {T::attn_out, "blocks.%d.attn.out"},
                                    {T::ffn_norm, "blocks.%d.mlp_norm"},
                                    {T::ffn_gate, "blocks.%d.mlp.gate"},
                                    {T::ffn_up, "blocks.%d.mlp.up"},
                                    {T::ffn_down, "blocks.%d.mlp.down"},
                                    {T::output_norm, "final_norm"},
                                    {T::output, "unembed"}}};
const DecoderNames* const kTables[] = {&kGpt2, &kLlama, &kQwen2, &kHookedTransformer, &kTestDecoder};
#else
const DecoderNames* const kTables[] = {&kGpt2, &kLlama, &kQwen2, &kHookedTransformer};
#endif

}  // namespace

bool DecoderNames::has(DecoderTensor t) const {
  for (const DecoderTensorName& n : names)
    if (n.tensor == t) return true;
  return false;
}

std::string DecoderNames::name(DecoderTensor t, int layer) const {
  for (const DecoderTensorName& n : names) {
    if (n.tensor != t) continue;
    const std::string pattern = n.name;
    const std::size_t at = pattern.find("%d");
    if (at == std::string::npos) return pattern;
    return pattern.substr(0, at) + std::to_string(layer) + pattern.substr(at + 2);
  }
  return {};
}

const DecoderNames* decoder_names(const std::string& kind) {
  for (const DecoderNames* t : kTables)
    if (kind == t->kind) return t;
  return nullptr;
}

std::string find_decoder_names(const std::string& kind, const DecoderNames*& out) {
  out = decoder_names(kind);
  if (out) return {};
  return "the decoder kind \"" + kind + "\" has no table of tensor names (core/models/decoder_names.cpp), so its checkpoints cannot be read";
}

}  // namespace attnlab
