#include "alignment_model.h"

#include "../losses.h"

namespace attnlab {

namespace {

void rename(Parameter& p, const char* name) { p.name = name; }

}  // namespace

AlignmentModel::AlignmentModel(const AlignmentConfig& config, Rng& init_rng)
    : config_(config),
      tok_emb_(config.vocab_size(), config.d_model, init_rng),
      in_pos_emb_(config.in_len(), config.d_model, init_rng),
      out_pos_emb_(config.out_len(), config.d_model, init_rng),
      attn_(config.d_model, config.heads, init_rng),
      out_(config.d_model, config.vocab_size(), init_rng) {
  rename(tok_emb_.weight, "tok_emb.weight");
  rename(in_pos_emb_.weight, "in_pos_emb.weight");
  rename(out_pos_emb_.weight, "out_pos_emb.weight");
  rename(attn_.in_proj_weight, "attn.in_proj_weight");
  rename(attn_.in_proj_bias, "attn.in_proj_bias");
  rename(attn_.out_proj_weight, "attn.out_proj.weight");
  rename(attn_.out_proj_bias, "attn.out_proj.bias");
  rename(out_.weight, "out.weight");
  rename(out_.bias, "out.bias");
}

ParameterList AlignmentModel::parameters() {
  ParameterList list{&tok_emb_.weight, &in_pos_emb_.weight, &out_pos_emb_.weight};
  for (Parameter* p : attn_.parameters()) list.push_back(p);
  for (Parameter* p : out_.parameters()) list.push_back(p);
  return list;
}

void AlignmentModel::zero_grad() { zero_grads(parameters()); }



void AlignmentModel::embed(const AlignmentBatch& batch) {
  const int B = batch.B, S = batch.S, T = batch.T, E = config_.d_model;
  // Copy and reverse ask every batch element the same queries (the output positions): project them
  // once. Pointer adds each sample's query token, so its queries differ.
  const bool shared = !config_.pointer();
  key_in_.resize(std::size_t(B) * S, E);
  value_in_.resize(std::size_t(B) * S, E);
  query_in_.resize(std::size_t(shared ? 1 : B) * T, E);
  tok_emb_.forward(batch.keys.data(), B * S, key_in_);
  tok_emb_.forward(batch.values.data(), B * S, value_in_);
  for (int b = 0; b < B; ++b) {
    if (config_.positional) {
      key_in_.middleRows(std::size_t(b) * S, S) += in_pos_emb_.weight.value.topRows(S);
      value_in_.middleRows(std::size_t(b) * S, S) += in_pos_emb_.weight.value.topRows(S);
    }
    if (!shared) {
      query_in_.middleRows(std::size_t(b) * T, T) = out_pos_emb_.weight.value.topRows(T);
      query_in_.middleRows(std::size_t(b) * T, T).rowwise() += tok_emb_.weight.value.row(batch.query[b]);
    }
  }
  if (shared) query_in_ = out_pos_emb_.weight.value.topRows(T);
  MhaInputs in{B, T, S, query_in_.data(), key_in_.data(), value_in_.data()};
  in.query_shared = shared;
  attn_.prepare(in);
}

void AlignmentModel::head_forward(const AlignmentBatch& batch) {
  attn_.finish_forward();
  logits_.resize(std::size_t(batch.B) * batch.T, config_.vocab_size());
  out_.forward(attn_.output(), logits_);
}

double AlignmentModel::loss_backward(const AlignmentBatch& batch, double token_count) {
  const double loss_sum = cross_entropy_sum(logits_, batch.targets.data(), &d_logits_, token_count);
  out_.backward(attn_.output(), d_logits_, &d_ctx_);
  attn_.begin_backward(d_ctx_.data(), nullptr);
  return loss_sum;
}

void AlignmentModel::finish_backward(const AlignmentBatch& batch) {
  attn_.finish_backward();
  backward_embeddings(batch);
}

double AlignmentModel::train_pass(const AlignmentBatch& batch, Backend backend, double token_count) {
  zero_grad();
  embed(batch);
  attention_forward(backend, attn_.kernel_forward_args());
  head_forward(batch);
  const double loss_sum = loss_backward(batch, token_count);
  attention_backward(backend, attn_.kernel_backward_args());
  finish_backward(batch);
  return loss_sum;
}

void AlignmentModel::backward_embeddings(const AlignmentBatch& batch) {
  const int B = batch.B, S = batch.S, T = batch.T;
  const RowMatrix& dk = attn_.d_key();
  const RowMatrix& dv = attn_.d_value();
  const RowMatrix& dq = attn_.d_query();
  tok_emb_.backward(batch.keys.data(), B * S, dk);
  tok_emb_.backward(batch.values.data(), B * S, dv);
  for (int b = 0; b < B; ++b) {
    if (config_.positional) {
      in_pos_emb_.weight.grad.topRows(S) += dk.middleRows(std::size_t(b) * S, S);
      in_pos_emb_.weight.grad.topRows(S) += dv.middleRows(std::size_t(b) * S, S);
    }
    if (config_.pointer()) {
      out_pos_emb_.weight.grad.topRows(T) += dq.middleRows(std::size_t(b) * T, T);
      tok_emb_.weight.grad.row(batch.query[b]) += dq.middleRows(std::size_t(b) * T, T).colwise().sum();
    }
  }
  if (!config_.pointer()) out_pos_emb_.weight.grad.topRows(T) += dq;  // already summed over the batch
}

int AlignmentModel::correct_predictions(const AlignmentBatch& batch) const {
  int correct = 0;
  for (Eigen::Index i = 0; i < logits_.rows(); ++i) {
    Eigen::Index best = 0;
    logits_.row(i).maxCoeff(&best);
    correct += int(best) == batch.targets[i];
  }
  return correct;
}

}  // namespace attnlab
