// A sharded safetensors checkpoint (huggingface/transformers' save_pretrained with max_shard_size): the
// weights in several files, model-00001-of-00002.safetensors ..., and model.safetensors.index.json
//   {"metadata": {"total_size": N}, "weight_map": {"tensor name": "shard file name", ...}}
// saying which file holds each tensor. transformers' load_sharded_checkpoint reads the index, then each
// shard once, in the order of the weight_map's first mention. Here the index is checked before any
// shard is read: a shard is named by a plain file name beside the index (no folder, no "..", no
// backslash, ending in .safetensors), so that neither a folder opener nor a Hub client ever reads a path
// the index makes up; each shard is read once. The shards' headers are then checked against it by the
// loader (checkpoint_loader.h): a tensor in two shards, one the index places in a shard that does not
// hold it, or a shard's tensor the index does not name are each refused by name.
// web/models/checkpoint_files.js (shardNames) makes the same file-name check for the Hub clients, which
// fetch the shards before the module sees them.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace attnlab {

constexpr const char* kShardIndexFile = "model.safetensors.index.json";
// More shards than any published checkpoint has (a 405B model comes in 191).
constexpr std::size_t kMaxShards = 1000;

struct SafetensorsShardIndex {
  std::vector<std::string> shards;               // each shard once, in the order of first mention
  std::map<std::string, std::string> weight_map;  // tensor name -> shard file name
  int shard_of(const std::string& file) const;    // its place in `shards`, or -1
};

// "" or why a shard's name is not a plain safetensors file name beside the index.
std::string shard_name_problem(const std::string& name);

// The index's text -> "" and the index, or one line naming the problem (prefixed with the file's name).
std::string parse_safetensors_shard_index(const std::string& text, SafetensorsShardIndex& out);

}  // namespace attnlab
