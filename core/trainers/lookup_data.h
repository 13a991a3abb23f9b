// The "Lookup" lab's data (course notebook 02, section 6): real MNIST digits from the asset of
// core/data/mnist_asset.h, split by a seed into
//   database   100 images (LookupConfig::database: 10 to 1,000) that every query looks up by attention
//              (the notebook's image_database, num_of_examples = 100, which it says can change)
//   held out   2,000 queries the model never trains on (evaluate())
//   training   the other 7,900 queries (epochs of 123 batches of 64: drop_last, like the DataLoader)
// The split is a Fisher-Yates shuffle of the asset's indices with PCG32 (core/rng.h) on its own stream
// of the seed: the first `database` go to the database, the next 2,000 are held out, the rest train.
// A database of 100 gives the split every earlier version gave.
// Images stay bytes here; the model sees them through torchvision's ToTensor + Normalize([0.5], [0.5]).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../data/mnist_asset.h"

namespace attnlab {

constexpr int kLookupDatabaseImages = 100;  // the notebook's num_of_examples: the default
// The database sizes a lab may choose. At least 10: the top-10 figures; at most 1,000: the page's grids
// stay readable and the hard-attention section's one-hot keys (one place per image) stay short.
constexpr int kLookupMinDatabaseImages = 10, kLookupMaxDatabaseImages = 1000;
constexpr int kLookupHeldOutImages = 2000;
constexpr int kLookupTrainingImages = 7900;  // of the asset's 10,000, with the default database
// What a Lookup model may need to train, as the Alignment lab's (alignment_task.h).
constexpr std::size_t kLookupMemoryBudget = std::size_t(512) << 20;

struct LookupConfig {
  std::uint32_t seed = 0;
  int heads = 1;       // the notebook's num_heads
  int embed_dim = 32;  // E
  int batch = 64;
  double lr = 1e-4;
  int database = kLookupDatabaseImages;  // S, the database's images (records: databaseSize)
};

// "" or the first problem, naming the setting and the allowed values; then the settings together:
// lookup_training_bytes() over kLookupMemoryBudget names the estimate and what to lower.
// `training_images` is how many queries the split left for training (a batch may not be larger:
// drop_last would leave no batch).
std::string validate_lookup_config(const LookupConfig& c, int training_images = kLookupTrainingImages);
// An upper bound on the bytes training this config needs (P = 784 pixels): the database and its Gram
// matrix, the training queries' cached terms (training_images x S doubles), a batch's (or an evaluation
// chunk's) rows through the attention (H x S weights each), and the parameters with Adam's moments.
double lookup_training_bytes(const LookupConfig& c, int training_images);

// torchvision's ToTensor then Normalize([0.5], [0.5]), in float32: (x / 255 - 0.5) / 0.5, in [-1, 1].
inline float normalise_pixel(std::uint8_t x) { return (float(x) / 255.0f - 0.5f) / 0.5f; }
void normalise_pixels(const std::uint8_t* pixels, std::size_t n, float* out);

struct LookupImages {
  std::vector<std::uint8_t> pixels;  // [count, P]
  std::vector<std::uint8_t> labels;  // [count]
  std::vector<int> asset_index;      // [count] where each image is in the asset (-1 if not from one)
  int count() const { return int(labels.size()); }
};

struct LookupData {
  int pixels = 0;  // P = rows * cols (784)
  LookupImages database, held_out, training;
};

// The seeded split described above, with `database` images in the database. Returns "" or why the asset
// cannot be split (too few images).
std::string make_lookup_data(const MnistAsset& asset, std::uint32_t seed, LookupData& out,
                             int database = kLookupDatabaseImages);
// "" or what is inconsistent in data built by hand (tests): sizes, labels, an empty part.
std::string validate_lookup_data(const LookupData& data);

// What a model must beat, from the data alone (held-out queries against the database):
struct LookupBaselines {
  // Top-1 of a database image picked uniformly at random: sum over held-out queries of the share of
  // the database with the query's label, / queries (the classes are unbalanced: 863..1127 a digit).
  double chance = 0.0;
  double mean_image_mse = 0.0;           // retrieving the database's mean image for every query
  double nearest_neighbour_top1 = 0.0;   // the raw-pixel nearest database image: label match rate
  double nearest_neighbour_mse = 0.0;    // and the MSE of copying it
};
LookupBaselines lookup_baselines(const LookupData& data);

}  // namespace attnlab
