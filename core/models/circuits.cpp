#include "circuits.h"

#include <algorithm>
#include <cmath>

namespace attnlab {

namespace {

// c . g in double, c [E] a residual part.
double dot(const float* c, const std::vector<double>& g) {
  double sum = 0.0;
  for (std::size_t e = 0; e < g.size(); ++e) sum += double(c[e]) * g[e];
  return sum;
}

const CachedActivation& cached(const ActivationCache& cache, const std::string& name) {
  static const CachedActivation none;
  const CachedActivation* a = cache.find(name);
  return a ? *a : none;
}

bool is_per_head(PatchSite site) { return site == PatchSite::z || site == PatchSite::pattern; }

std::string check_ids(const Decoder& model, const std::vector<std::int32_t>& ids, const char* which) {
  const std::string error = model.check_prompt(ids.data(), int(ids.size()));
  return error.empty() ? error : std::string(which) + ": " + error;
}

}  // namespace

std::string check_answers(const Decoder& model, int answer, int wrong) {
  const int V = model.writable_vocabulary();
  for (int id : {answer, wrong})
    if (id < 0 || id >= V)
      return "answer token id " + std::to_string(id) + " is outside the vocabulary the tokenizer writes [0, " + std::to_string(V) + ")";
  if (answer == wrong) return "the answer and the wrong answer are the same token (" + std::to_string(answer) + "): their difference is 0";
  return {};
}

std::string attribute_logits(Decoder& model, Backend backend, const std::vector<std::int32_t>& ids, int answer, int wrong,
                             LogitAttribution& out, ActivationCache* cache) {
  out = LogitAttribution{};
  std::string error = check_ids(model, ids, "the prompt");
  if (error.empty()) error = check_answers(model, answer, wrong);
  if (!error.empty()) return error;
  ActivationCache own;
  ActivationCache& c = cache ? *cache : own;
  Intervention capture;
  capture.capture = &c;
  const int T = int(ids.size());
  model.forward(backend, ids.data(), T, capture);

  const DecoderSpec& s = model.spec();
  const int L = s.n_layer, H = s.n_head, D = s.head_dim, E = s.n_embd, t = T - 1;
  const bool layer_norm = s.norm == DecoderNorm::layer_norm;
  // g = centre(w * d) / scale: centring a part and dotting it with w * d is dotting it with the centred
  // w * d (the mean of c times the sum of w * d, taken off either side).
  const std::vector<float> ua = model.unembedding_row(answer), ub = model.unembedding_row(wrong);
  // Without a final norm (TransformerLens's normalization_type None) the residual is unembedded as it is:
  // scale 1, weight 1.
  const std::vector<float>& w = model.final_norm_weight();
  const double scale = s.has_norm() ? cached(c, "ln_final.hook_scale").values[std::size_t(t)] : 1.0;
  std::vector<double> g(static_cast<std::size_t>(E));
  double mean = 0.0;
  for (int e = 0; e < E; ++e)
    g[std::size_t(e)] = (w.empty() ? 1.0 : double(w[std::size_t(e)])) * (double(ua[std::size_t(e)]) - double(ub[std::size_t(e)]));
  for (double x : g) mean += x / E;
  for (double& x : g) x = (layer_norm ? x - mean : x) / scale;

  const auto row = [&](const std::string& name) { return cached(c, name).values.data() + std::size_t(t) * E; };
  out.layers = L, out.heads = H;
  out.embed = dot(row("hook_embed"), g);
  if (s.positions == DecoderPositions::learned) out.pos_embed = dot(row("hook_pos_embed"), g);
  out.head.assign(std::size_t(L) * H, 0.0);
  out.attn_bias.assign(std::size_t(L), 0.0);
  out.mlp.assign(std::size_t(L), 0.0);
  for (int l = 0; l < L; ++l) {
    const float* z = cached(c, block_hook(l, "attn.hook_z")).values.data() + std::size_t(t) * H * D;
    for (int h = 0; h < H; ++h) out.head[std::size_t(l) * H + h] = dot(model.head_output(l, h, z).data(), g);
    out.attn_bias[std::size_t(l)] = dot(model.attention_output_bias(l).data(), g);
    if (s.has_mlp()) out.mlp[std::size_t(l)] = dot(row(block_hook(l, "hook_mlp_out")), g);  // 0 attention only
  }
  const std::vector<float>& b = model.final_norm_bias();
  for (std::size_t e = 0; e < b.size(); ++e) out.constant += double(b[e]) * (double(ua[e]) - double(ub[e]));
  const std::vector<float>& b_U = model.output_bias();
  if (!b_U.empty()) out.constant += double(b_U[std::size_t(answer)]) - double(b_U[std::size_t(wrong)]);
  out.total = out.embed + out.pos_embed + out.constant;
  for (double x : out.head) out.total += x;
  for (int l = 0; l < L; ++l) out.total += out.attn_bias[std::size_t(l)] + out.mlp[std::size_t(l)];
  out.logit_diff = model.logit_difference(t, answer, wrong);
  return {};
}

std::string check_patching_pair(const Decoder& model, const std::vector<std::int32_t>& clean, const std::vector<std::int32_t>& corrupt) {
  std::string error = check_ids(model, clean, "the clean prompt");
  if (error.empty()) error = check_ids(model, corrupt, "the corrupted prompt");
  if (!error.empty()) return error;
  if (clean.size() != corrupt.size())
    return "the clean prompt is " + std::to_string(clean.size()) + " tokens and the corrupted one " + std::to_string(corrupt.size()) +
           ": patching puts one run's activations in the other's places, so both must have the same number of tokens";
  return {};
}

std::string check_patch_site(const Decoder& model, PatchSite site) {
  if (site == PatchSite::mlp_out && !model.spec().has_mlp())
    return "this model is attention only: it has no MLP, so there is no hook_mlp_out to patch";
  return {};
}

int patching_passes(const Decoder& model, int T, const std::vector<PatchSite>& sites) {
  int cells = 0;
  for (PatchSite site : sites) cells += model.spec().n_layer * (is_per_head(site) ? model.spec().n_head : T);
  return cells + 2;  // and the clean and corrupted runs
}

std::string ActivationPatcher::begin(Decoder& model, Backend backend, const std::vector<std::int32_t>& clean,
                                     const std::vector<std::int32_t>& corrupt, int answer, int wrong) {
  model_ = nullptr;
  std::string error = check_patching_pair(model, clean, corrupt);
  if (error.empty()) error = check_answers(model, answer, wrong);
  if (!error.empty()) return error;
  const int T = int(clean.size());
  Intervention capture;
  capture.capture = &clean_;
  model.forward(backend, clean.data(), T, capture);
  clean_diff_ = model.logit_difference(T - 1, answer, wrong);
  model.forward(backend, corrupt.data(), T);
  corrupt_diff_ = model.logit_difference(T - 1, answer, wrong);
  corrupted_ = model.save_pass();
  if (!(std::fabs(clean_diff_ - corrupt_diff_) > 1e-6))
    return "the clean and corrupted prompts give the same logit difference (" + std::to_string(clean_diff_) +
           "): patching has nothing to bring back; corrupt a token the answer depends on";
  model_ = &model, backend_ = backend, corrupt_ = corrupt, answer_ = answer, wrong_ = wrong;
  return {};
}

int ActivationPatcher::cells_per_batch(PatchSite site, int layer) const {
  // A batch holds its cells' rows through the layers from `layer` on (the residuals, the products'
  // outputs, the MLP's inner rows) and each cell's copy of the keys and values; at most kBatchBytes.
  const DecoderSpec& s = model_->spec();
  const int T = tokens(), layers = s.n_layer - layer;
  const double row = 4.0 * (double(layers + 5) * s.n_embd + double(s.q_width() + 2 * s.kv_width()) + 2.0 * s.n_inner);
  const double cell = 4.0 * 2.0 * layers * double(T) * s.kv_width();
  const double rows_a_cell = is_per_head(site) ? T : (T + 1) / 2.0;  // a position cell's rows: T - k
  return std::max(1, int(kBatchBytes / (cell + rows_a_cell * row)));
}

std::vector<double> ActivationPatcher::row(PatchSite site, int layer) {
  const int T = tokens(), cols = is_per_head(site) ? model_->spec().n_head : T;
  const CachedActivation& from = cached(clean_, patch_site_hook(site, layer));
  const int per_batch = cells_per_batch(site, layer);
  std::vector<double> out(static_cast<std::size_t>(cols));
  for (int k0 = 0; k0 < cols; k0 += per_batch) {
    // The corrupted pass again from this layer, for each cell's rows from its patched one on (every row
    // for a head's: it patches them all); the rest is the corrupted run's, unchanged by the patch.
    std::vector<Decoder::Rerun> cells;
    for (int k = k0; k < std::min(cols, k0 + per_batch); ++k) {
      ActivationPatch p;
      p.site = site, p.layer = layer, p.source = from.values.data();
      if (is_per_head(site)) p.head = k;  // every position of one head
      else p.position = k;
      Decoder::Rerun cell;
      cell.from = is_per_head(site) ? 0 : k;
      cell.intervention.patches.push_back(p);
      cells.push_back(std::move(cell));
    }
    model_->restore_pass(corrupted_);
    model_->rerun(backend_, layer, cells);
    for (int c = 0; c < int(cells.size()); ++c) {
      const double patched = model_->cell_logit_difference(c, answer_, wrong_);
      out[std::size_t(k0 + c)] = (patched - corrupt_diff_) / (clean_diff_ - corrupt_diff_);
    }
  }
  model_->restore_pass(corrupted_);  // the model's last pass is the corrupted prompt's again
  return out;
}

std::string patch_activations(Decoder& model, Backend backend, const std::vector<std::int32_t>& clean,
                              const std::vector<std::int32_t>& corrupt, int answer, int wrong, const std::vector<PatchSite>& sites,
                              ActivationPatching& out) {
  out = ActivationPatching{};
  ActivationPatcher patcher;
  const std::string error = patcher.begin(model, backend, clean, corrupt, answer, wrong);
  if (!error.empty()) return error;
  out.clean_diff = patcher.clean_diff(), out.corrupt_diff = patcher.corrupt_diff();
  for (PatchSite site : sites) {
    PatchingGrid grid;
    grid.site = site;
    grid.rows = model.spec().n_layer, grid.cols = is_per_head(site) ? model.spec().n_head : patcher.tokens();
    for (int l = 0; l < grid.rows; ++l) {
      const std::vector<double> row = patcher.row(site, l);
      grid.values.insert(grid.values.end(), row.begin(), row.end());
    }
    out.grids.push_back(std::move(grid));
  }
  return {};
}

}  // namespace attnlab
