#include "lookup_data.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <numeric>

#include "../rng.h"
#include "../validate.h"

namespace attnlab {

namespace {

// PCG32 stream of the seed that draws the split (lookup_trainer.cpp uses 1 and 2).
constexpr std::uint64_t kSplitStream = 3;

void take(const MnistAsset& asset, const int* index, int count, LookupImages& out) {
  const int P = asset.pixels_per_image();
  out.pixels.resize(std::size_t(count) * P);
  out.labels.resize(count);
  out.asset_index.assign(index, index + count);
  for (int i = 0; i < count; ++i) {
    std::copy_n(asset.image(index[i]), P, &out.pixels[std::size_t(i) * P]);
    out.labels[i] = asset.labels[index[i]];
  }
}

}  // namespace

std::string validate_lookup_config(const LookupConfig& c, int training_images) {
  if (c.database < kLookupMinDatabaseImages || c.database > kLookupMaxDatabaseImages)
    return "database must be an integer in [" + std::to_string(kLookupMinDatabaseImages) + ", " +
           std::to_string(kLookupMaxDatabaseImages) + "], got " + std::to_string(c.database);
  std::string error = first_error({
      check_positive("embed_dim", c.embed_dim), check_at_most("embed_dim", c.embed_dim, 256),
      check_positive("heads", c.heads), check_at_most("heads", c.heads, 16),
      check_divisible("embed_dim", c.embed_dim, "heads", c.heads),
      check_positive("batch", c.batch), check_at_most("batch", c.batch, std::min(training_images, 1024))});
  if (!error.empty()) return error;
  if (!(c.lr > 0.0 && c.lr <= 1.0)) return "lr must be a number in (0, 1], got " + std::to_string(c.lr);
  // The settings together: each may be in range while what they need is not.
  const double bytes = lookup_training_bytes(c, training_images);
  if (bytes > kLookupMemoryBudget)
    return "these settings need about " + megabytes(bytes) + " to train; the lab allows " + megabytes(kLookupMemoryBudget) +
           ": lower batch (" + std::to_string(c.batch) + "), database (" + std::to_string(c.database) + "), heads (" +
           std::to_string(c.heads) + ") or embed_dim (" + std::to_string(c.embed_dim) + ")";
  return {};
}

double lookup_training_bytes(const LookupConfig& c, int training_images) {
  constexpr double P = 784;
  const double S = c.database, E = c.embed_dim, H = c.heads, N = training_images;
  const double rows = std::max(c.batch, 250);  // evaluate() runs chunks of 250 held-out queries
  const double shards = c.batch >= 2 ? 2 : 1;
  const double parameters = P * E + E + 4 * E * E + 4 * E;  // img_mlp, in_proj, out_proj
  const double floats = 2 * S * P + 2 * S * E + P * E   // images and images^T; embedded and its gradient; weight^T
                        + rows * (2 * P + 4 * H * S + 8 * E)  // queries, retrieval; weights, their gradients, the kernel's
                        + parameters * (2 * shards + 2);  // values and gradients per copy, Adam's two moments
  const double doubles = S * S + N * (S + 1) + rows * (S + 1);  // Gram; cached D x and |x|^2; the batch's
  return 4.0 * floats + 8.0 * doubles;
}

void normalise_pixels(const std::uint8_t* pixels, std::size_t n, float* out) {
  // a table of the 256 values: two float divisions a pixel were 3% of a step
  static const auto table = [] {
    std::array<float, 256> t{};
    for (int x = 0; x < 256; ++x) t[x] = normalise_pixel(std::uint8_t(x));
    return t;
  }();
  for (std::size_t i = 0; i < n; ++i) out[i] = table[pixels[i]];
}

std::string make_lookup_data(const MnistAsset& asset, std::uint32_t seed, LookupData& out, int database) {
  out = LookupData{};
  const int reserved = database + kLookupHeldOutImages;
  if (database < 1) return "the database needs at least one image, got " + std::to_string(database);
  if (asset.count <= reserved)
    return "the digit asset has " + std::to_string(asset.count) + " images; the lookup lab needs more than " +
           std::to_string(reserved) + " (" + std::to_string(database) + " for the database, 2000 held out, the rest to train on)";
  std::vector<int> order(asset.count);
  std::iota(order.begin(), order.end(), 0);
  Rng rng(seed, kSplitStream);
  for (int i = asset.count - 1; i > 0; --i) std::swap(order[i], order[rng.below(std::uint32_t(i + 1))]);
  out.pixels = asset.pixels_per_image();
  take(asset, order.data(), database, out.database);
  take(asset, order.data() + database, kLookupHeldOutImages, out.held_out);
  take(asset, order.data() + reserved, asset.count - reserved, out.training);
  return {};
}

std::string validate_lookup_data(const LookupData& d) {
  if (d.pixels <= 0) return "lookup data: pixels per image must be positive, got " + std::to_string(d.pixels);
  const std::pair<const char*, const LookupImages*> parts[] = {
      {"database", &d.database}, {"held_out", &d.held_out}, {"training", &d.training}};
  for (const auto& [name, images] : parts) {
    if (images->count() == 0) return std::string("lookup data: the ") + name + " set is empty";
    if (images->pixels.size() != std::size_t(images->count()) * d.pixels)
      return std::string("lookup data: the ") + name + " set has " + std::to_string(images->pixels.size()) +
             " pixels for " + std::to_string(images->count()) + " labels of " + std::to_string(d.pixels) + " pixels";
    for (int i = 0; i < images->count(); ++i)
      if (images->labels[i] > 9)
        return std::string("lookup data: ") + name + " label " + std::to_string(i) + " is " +
               std::to_string(images->labels[i]) + " (labels are 0..9)";
  }
  return {};
}

LookupBaselines lookup_baselines(const LookupData& d) {
  const int P = d.pixels, S = d.database.count(), N = d.held_out.count();
  LookupBaselines b;
  int db_label_count[10] = {};
  for (std::uint8_t label : d.database.labels) ++db_label_count[label];
  std::vector<double> mean_image(P, 0.0);
  for (int s = 0; s < S; ++s)
    for (int i = 0; i < P; ++i) mean_image[i] += normalise_pixel(d.database.pixels[std::size_t(s) * P + i]);
  for (double& m : mean_image) m /= S;
  double mean_sq = 0.0, nn_sq = 0.0;
  int nn_hits = 0;
  for (int q = 0; q < N; ++q) {
    const std::uint8_t* query = &d.held_out.pixels[std::size_t(q) * P];
    const std::uint8_t label = d.held_out.labels[q];
    b.chance += double(db_label_count[label]) / S;
    for (int i = 0; i < P; ++i) {
      const double e = mean_image[i] - normalise_pixel(query[i]);
      mean_sq += e * e;
    }
    // Nearest neighbour on the raw bytes, exactly in integers (normalising is affine, so it is the
    // same image up to float rounding); ties go to the lower database index.
    int best = 0;
    std::int64_t best_distance = -1;
    for (int s = 0; s < S; ++s) {
      const std::uint8_t* image = &d.database.pixels[std::size_t(s) * P];
      std::int64_t distance = 0;
      for (int i = 0; i < P; ++i) {
        const int e = int(image[i]) - int(query[i]);
        distance += e * e;
      }
      if (best_distance < 0 || distance < best_distance) best_distance = distance, best = s;
    }
    nn_hits += d.database.labels[best] == label;
    for (int i = 0; i < P; ++i) {
      const double e = double(normalise_pixel(d.database.pixels[std::size_t(best) * P + i])) - normalise_pixel(query[i]);
      nn_sq += e * e;
    }
  }
  b.chance /= N;
  b.mean_image_mse = mean_sq / (double(N) * P);
  b.nearest_neighbour_top1 = double(nn_hits) / N;
  b.nearest_neighbour_mse = nn_sq / (double(N) * P);
  return b;
}

}  // namespace attnlab
