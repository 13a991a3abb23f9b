#include "induction_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "../layers/activations.h"
#include "../losses.h"

namespace attnlab {

namespace {

// TransformerLens's init_mode "gpt2": N(0, initializer_range), initializer_range = 0.8 / sqrt(d_model).
void init_tl_normal(RowMatrix& m, float std, Rng& rng) {
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = std * rng.normal();
}

Parameter tl_parameter(const std::string& name, std::vector<int> shape) {
  int rows = 1;
  for (std::size_t i = 0; i + 1 < shape.size(); ++i) rows *= shape[i];
  Parameter p(name, rows, shape.back());
  p.torch_shape = std::move(shape);
  return p;
}

// Results into a layer's own buffer (a CPU kernel may have written them there already).
void store(float* to, const float* from, std::size_t n) {
  if (to != from) std::copy(from, from + n, to);
}

}  // namespace

InductionModel::Block::Block(const InductionConfig& c, int layer, Rng& rng)
    : attn(c.d_model, c.heads, rng, c.d_head),
      W_Q(tl_parameter("blocks." + std::to_string(layer) + ".attn.W_Q", {c.heads, c.d_model, c.d_head})),
      W_K(tl_parameter("blocks." + std::to_string(layer) + ".attn.W_K", {c.heads, c.d_model, c.d_head})),
      W_V(tl_parameter("blocks." + std::to_string(layer) + ".attn.W_V", {c.heads, c.d_model, c.d_head})),
      W_O(tl_parameter("blocks." + std::to_string(layer) + ".attn.W_O", {c.heads, c.d_head, c.d_model})),
      b_Q(tl_parameter("blocks." + std::to_string(layer) + ".attn.b_Q", {c.heads, c.d_head})),
      b_K(tl_parameter("blocks." + std::to_string(layer) + ".attn.b_K", {c.heads, c.d_head})),
      b_V(tl_parameter("blocks." + std::to_string(layer) + ".attn.b_V", {c.heads, c.d_head})) {
  const std::string prefix = "blocks." + std::to_string(layer);
  attn.out_proj_bias.name = prefix + ".attn.b_O";
  if (c.layer_norm) {
    ln1 = std::make_unique<LayerNorm>(c.d_model, prefix + ".ln1");
    if (c.mlp) ln2 = std::make_unique<LayerNorm>(c.d_model, prefix + ".ln2");
  }
  if (c.mlp) {
    mlp_in = std::make_unique<Linear>(c.d_model, c.d_mlp(), rng, true, WeightLayout::in_out);
    mlp_out = std::make_unique<Linear>(c.d_mlp(), c.d_model, rng, true, WeightLayout::in_out);
    mlp_in->weight.name = prefix + ".mlp.W_in";
    mlp_in->bias.name = prefix + ".mlp.b_in";
    mlp_out->weight.name = prefix + ".mlp.W_out";
    mlp_out->bias.name = prefix + ".mlp.b_out";
  }
}

InductionModel::InductionModel(const InductionConfig& config, int vocab, Rng& init_rng)
    : config_(config),
      vocab_(vocab),
      embed_(vocab, config.d_model, init_rng),
      pos_embed_(config.context, config.d_model, init_rng),
      unembed_(config.d_model, vocab, init_rng, true, WeightLayout::in_out) {
  embed_.weight.name = "embed.W_E";
  pos_embed_.weight.name = "pos_embed.W_pos";
  for (int l = 0; l < config.layers; ++l) blocks_.push_back(std::make_unique<Block>(config, l, init_rng));
  if (config.layer_norm) ln_final_ = std::make_unique<LayerNorm>(config.d_model, "ln_final");
  unembed_.weight.name = "unembed.W_U";
  unembed_.bias.name = "unembed.b_U";
  // The layers drew their own initial values above (so that building one never depends on another's
  // draws); TransformerLens's init replaces them, W_ by W_ in state_dict order, from the same stream.
  const float std = 0.8f / std::sqrt(float(config.d_model));
  for (Parameter* p : parameters()) {
    const std::string& n = p->name;
    const std::size_t dot = n.rfind('.');
    if (n.compare(dot + 1, 2, "W_") == 0) init_tl_normal(p->value, std, init_rng);
    else if (n.compare(dot + 1, 2, "b_") == 0) p->value.setZero();
  }
}

ParameterList InductionModel::parameters() {
  // HookedTransformer: embed, pos_embed, blocks (ln1, ln2, attn, mlp), ln_final, unembed; Attention
  // registers W_Q, W_O, b_Q, b_O in its base class and then W_K, W_V, b_K, b_V.
  ParameterList out = {&embed_.weight, &pos_embed_.weight};
  for (auto& b : blocks_) {
    if (b->ln1) out.insert(out.end(), {&b->ln1->w, &b->ln1->b});
    if (b->ln2) out.insert(out.end(), {&b->ln2->w, &b->ln2->b});
    out.insert(out.end(), {&b->W_Q, &b->W_O, &b->b_Q, &b->attn.out_proj_bias, &b->W_K, &b->W_V, &b->b_K, &b->b_V});
    if (b->mlp_in) out.insert(out.end(), {&b->mlp_in->weight, &b->mlp_in->bias, &b->mlp_out->weight, &b->mlp_out->bias});
  }
  if (ln_final_) out.insert(out.end(), {&ln_final_->w, &ln_final_->b});
  out.insert(out.end(), {&unembed_.weight, &unembed_.bias});
  return out;
}

// in_proj_weight rows [0, HD) project queries, [HD, 2HD) keys, [2HD, 3HD) values; row h D + d of a block
// is head h's output d, so its column e is W[h, e, d]. out_proj.weight [E, HD] is W_O [HD, E] transposed.
void InductionModel::pack_attention(Block& b) {
  const int H = config_.heads, E = config_.d_model, D = config_.d_head, HD = H * D;
  RowMatrix& in = b.attn.in_proj_weight.value;
  RowMatrix& bias = b.attn.in_proj_bias.value;
  const Parameter* W[3] = {&b.W_Q, &b.W_K, &b.W_V};
  const Parameter* bs[3] = {&b.b_Q, &b.b_K, &b.b_V};
  for (int i = 0; i < 3; ++i)
    for (int h = 0; h < H; ++h) {
      in.block(i * HD + h * D, 0, D, E) = W[i]->value.block(h * E, 0, E, D).transpose();
      bias.block(0, i * HD + h * D, 1, D) = bs[i]->value.row(h);
    }
  b.attn.out_proj_weight.value = b.W_O.value.transpose();
}

void InductionModel::unpack_attention_grads(Block& b) {
  const int H = config_.heads, E = config_.d_model, D = config_.d_head, HD = H * D;
  const RowMatrix& in = b.attn.in_proj_weight.grad;
  const RowMatrix& bias = b.attn.in_proj_bias.grad;
  Parameter* W[3] = {&b.W_Q, &b.W_K, &b.W_V};
  Parameter* bs[3] = {&b.b_Q, &b.b_K, &b.b_V};
  for (int i = 0; i < 3; ++i)
    for (int h = 0; h < H; ++h) {
      W[i]->grad.block(h * E, 0, E, D) = in.block(i * HD + h * D, 0, D, E).transpose();
      bs[i]->grad.row(h) = bias.block(0, i * HD + h * D, 1, D);
    }
  b.W_O.grad = b.attn.out_proj_weight.grad.transpose();
  // b_K's gradient is exactly zero: b_K adds q . b_K to every score of a query's row, which the softmax
  // ignores (each row of the scores' gradient sums to 0). Summed in float32 it is rounding noise of about
  // 1e-9, which Adam, dividing by its own root mean square, turns into steps of a tenth of lr: b_K would
  // wander, and a large b_K costs the scores float32's digits. Its exact value is kept instead (PyTorch's
  // float64 run agrees; its float32 run wanders: docs/induction.md).
  b.b_K.grad.setZero();
}

// ---- the pass

void InductionModel::begin(const InductionBatch& batch, bool training, const HeadAblation* off) {
  B_ = batch.B;
  T_ = batch.T;
  tokens_ = batch.tokens.data();
  training_ = training;
  off_ = off ? *off : HeadAblation{};
  const std::size_t N = std::size_t(B_) * T_;
  const int E = config_.d_model;
  if (causal_mask_.size() != std::size_t(T_) * T_) {
    causal_mask_.assign(std::size_t(T_) * T_, 0.0f);
    for (int t = 0; t < T_; ++t)
      for (int s = t + 1; s < T_; ++s) causal_mask_[std::size_t(t) * T_ + s] = -std::numeric_limits<float>::infinity();
  }
  if (training) {
    zero_grads(parameters());
    for (auto& b : blocks_) zero_grads({&b->attn.in_proj_weight, &b->attn.in_proj_bias, &b->attn.out_proj_weight});
  }
  for (auto& b : blocks_) {
    pack_attention(*b);
    b->weights_kept = false;
  }
  // hook_embed + hook_pos_embed
  resid_pre_.resize(blocks_.size() + 1);
  RowMatrix& x = resid_pre_[0];
  x.resize(Eigen::Index(N), E);
  embed_.forward(tokens_, int(N), x);
  for (int b = 0; b < B_; ++b) x.middleRows(Eigen::Index(b) * T_, T_) += pos_embed_.weight.value.topRows(T_);
  layer_ = 0;
  stage_ = Stage::forward;
  prepare_layer(0);
}

void InductionModel::begin_training(const InductionBatch& batch, double token_count) {
  token_count_ = token_count;
  begin(batch, true, nullptr);
}

void InductionModel::begin_looking(const InductionBatch& batch, const HeadAblation* off) { begin(batch, false, off); }

void InductionModel::prepare_layer(int l) {
  Block& b = *blocks_[std::size_t(l)];
  const RowMatrix& x = resid_pre_[std::size_t(l)];
  const float* a = x.data();
  if (b.ln1) {
    b.normalized.resize(x.rows(), x.cols());
    b.ln1->forward(x, b.normalized);
    a = b.normalized.data();
  }
  MhaInputs in{B_, T_, T_, a, a, a};
  in.attn_mask = causal_mask_.data();  // [T, T]
  b.attn.prepare(in);
}

void InductionModel::after_forward(int l) {
  Block& b = *blocks_[std::size_t(l)];
  const int H = config_.heads, D = config_.d_head;
  if (!off_.empty()) {  // hook_z of the heads switched off, zeroed before W_O
    float* z = b.attn.kernel_forward_args().out;  // [B, H, T, D]
    for (int s = 0; s < B_; ++s)
      for (int h = 0; h < H; ++h)
        if (off_.off(l, h)) std::fill_n(z + (std::size_t(s) * H + h) * T_ * D, std::size_t(T_) * D, 0.0f);
  }
  b.attn.finish_forward();
  const RowMatrix& x = resid_pre_[std::size_t(l)];
  RowMatrix& next = resid_pre_[std::size_t(l) + 1];
  if (b.mlp_in) {
    b.resid_mid = x + b.attn.output();
    const RowMatrix* m = &b.resid_mid;
    if (b.ln2) {
      b.mlp_normalized.resize(x.rows(), x.cols());
      b.ln2->forward(b.resid_mid, b.mlp_normalized);
      m = &b.mlp_normalized;
    }
    b.mlp_pre.resize(x.rows(), config_.d_mlp());
    b.mlp_in->forward(*m, b.mlp_pre);
    b.mlp_post.resize(x.rows(), config_.d_mlp());
    gelu_forward(b.mlp_pre, b.mlp_post);
    next.resize(x.rows(), x.cols());
    b.mlp_out->forward(b.mlp_post, next);
    next += b.resid_mid;
  } else {
    next = x + b.attn.output();
  }
  if (l + 1 < layers()) {
    layer_ = l + 1;
    prepare_layer(layer_);
    return;
  }
  head_and_loss();
}

void InductionModel::head_and_loss() {
  const RowMatrix& x = resid_pre_.back();
  const RowMatrix* f = &x;
  if (ln_final_) {
    final_.resize(x.rows(), x.cols());
    ln_final_->forward(x, final_);
    f = &final_;
  }
  logits_.resize(x.rows(), vocab_);
  unembed_.forward(*f, logits_);
  // The loss of every target: position t predicts token t + 1, t < T - 1.
  const int P = T_ - 1;
  target_losses_.resize(std::size_t(B_) * P);
  loss_sum_ = 0.0;
  if (training_) d_logits_.setZero(logits_.rows(), vocab_);
  RowMatrix d_sequence;
  for (int s = 0; s < B_; ++s) {
    const Eigen::Index first = Eigen::Index(s) * T_;
    loss_sum_ += cross_entropy_sum(logits_.middleRows(first, P), tokens_ + first + 1, training_ ? &d_sequence : nullptr,
                                   token_count_, &target_losses_[std::size_t(s) * P]);
    if (training_) d_logits_.middleRows(first, P) = d_sequence;
  }
  if (!training_) {
    stage_ = Stage::done;
    return;
  }
  // The backward as far as the last layer's attention call: the unembedding, ln_final, the last MLP.
  d_resid_.resize(x.rows(), x.cols());
  unembed_.backward(*f, d_logits_, &d_tmp_);
  if (ln_final_) ln_final_->backward(d_tmp_, d_resid_);
  else d_resid_ = d_tmp_;
  layer_ = layers() - 1;
  backward_mlp(layer_);
  stage_ = Stage::backward;
}

// d_resid holds dL/d(resid_post) of layer l: through the MLP (when there is one) it becomes
// dL/d(resid_mid), which is also dL/d(attn_out); the attention's backward starts from it.
void InductionModel::backward_mlp(int l) {
  Block& b = *blocks_[std::size_t(l)];
  if (b.mlp_in) {
    // from resid_post = resid_mid + mlp_post W_out + b_out
    b.mlp_out->backward(b.mlp_post, d_resid_, &d_mlp_);
    gelu_backward(b.mlp_pre, d_mlp_, d_mlp_);
    const RowMatrix& m = b.ln2 ? b.mlp_normalized : b.resid_mid;
    b.mlp_in->backward(m, d_mlp_, &d_tmp_);
    if (b.ln2) {
      RowMatrix d_mid(d_tmp_.rows(), d_tmp_.cols());
      b.ln2->backward(d_tmp_, d_mid);
      d_resid_ += d_mid;
    } else {
      d_resid_ += d_tmp_;
    }
  }
  b.attn.begin_backward(d_resid_.data(), nullptr);
}

void InductionModel::after_backward(int l) {
  Block& b = *blocks_[std::size_t(l)];
  b.attn.finish_backward();
  // from q, k, v = a W (+ b): the attention's input gets all three gradients
  d_tmp_ = b.attn.d_query() + b.attn.d_key() + b.attn.d_value();
  if (b.ln1) {
    RowMatrix d_x(d_tmp_.rows(), d_tmp_.cols());
    b.ln1->backward(d_tmp_, d_x);
    d_resid_ += d_x;
  } else {
    d_resid_ += d_tmp_;
  }
  unpack_attention_grads(b);
  if (l > 0) {
    layer_ = l - 1;
    backward_mlp(layer_);
    return;
  }
  // from resid_pre[0] = W_E[tokens] + W_pos[0 .. T)
  embed_.backward(tokens_, B_ * T_, d_resid_);
  for (int s = 0; s < B_; ++s) pos_embed_.weight.grad.topRows(T_) += d_resid_.middleRows(Eigen::Index(s) * T_, T_);
  stage_ = Stage::done;
}

void InductionModel::run(Backend backend) {
  while (stage_ == Stage::forward) {
    Block& b = *blocks_[std::size_t(layer_)];
    attention_forward(backend, b.attn.kernel_forward_args());
    b.weights_kept = true;
    after_forward(layer_);
  }
  while (stage_ == Stage::backward) {
    Block& b = *blocks_[std::size_t(layer_)];
    attention_backward(backend, b.attn.kernel_backward_args());
    after_backward(layer_);
  }
}

// ---- the staged calls

bool InductionModel::next_call(AttentionForward& call) {
  if (stage_ != Stage::forward) return false;
  call = blocks_[std::size_t(layer_)]->attn.kernel_forward_args();
  call.weights = nullptr;
  call.out = nullptr;
  return true;
}

void InductionModel::finish_call(const float* weights, const float* out) {
  Block& b = *blocks_[std::size_t(layer_)];
  const AttentionForward f = b.attn.kernel_forward_args();
  store(f.out, out, f.shape.q_size());
  if (weights) store(f.weights, weights, f.shape.weights_size());
  b.weights_kept = weights != nullptr;
  after_forward(layer_);
}

std::string InductionModel::check_pending() const {
  switch (stage_) {
    case Stage::forward: return {};
    case Stage::idle: return "no pass is under way: begin one first";
    case Stage::backward: return "the pass's forward calls are finished; its backward calls are next";
    default: return "the pass is finished";
  }
}

bool InductionModel::next_backward(AttentionBackward& call) {
  if (stage_ != Stage::backward) return false;
  const Block& b = *blocks_[std::size_t(layer_)];
  call = blocks_[std::size_t(layer_)]->attn.kernel_backward_args();
  if (!b.weights_kept) call.weights = nullptr;
  call.d_q = call.d_k = call.d_v = nullptr;
  return true;
}

void InductionModel::finish_backward(const float* d_q, const float* d_k, const float* d_v) {
  Block& b = *blocks_[std::size_t(layer_)];
  const AttentionBackward a = b.attn.kernel_backward_args();
  store(a.d_q, d_q, a.shape.q_size());
  store(a.d_k, d_k, a.shape.kv_size());
  store(a.d_v, d_v, a.shape.kv_size());
  after_backward(layer_);
}

}  // namespace attnlab
