#include "safetensors_shards.h"

#include "json.h"

namespace attnlab {

int SafetensorsShardIndex::shard_of(const std::string& file) const {
  for (std::size_t i = 0; i < shards.size(); ++i)
    if (shards[i] == file) return int(i);
  return -1;
}

std::string shard_name_problem(const std::string& name) {
  const std::string quoted = "\"" + name.substr(0, 80) + "\"";
  if (name.empty() || name.size() > 255) return "a shard's name must be a file name of 1 to 255 bytes";
  if (name.find('/') != std::string::npos || name.find('\\') != std::string::npos)
    return "shard " + quoted + " names a folder: a shard is a plain file name beside the index";
  if (name == "." || name == ".." || name[0] == '.') return "shard " + quoted + " is not a plain file name (it starts with a dot)";
  for (unsigned char c : name)
    if (c < 0x20 || c == 0x7f || c == ':') return "shard " + quoted + " holds a control character or ':': not a plain file name";
  const std::string ext = ".safetensors";
  if (name.size() <= ext.size() || name.compare(name.size() - ext.size(), ext.size(), ext) != 0)
    return "shard " + quoted + " is not a .safetensors file";
  if (name == "model.safetensors") return "shard \"model.safetensors\" is the unsharded file's name, not a shard's";
  return {};
}

std::string parse_safetensors_shard_index(const std::string& text, SafetensorsShardIndex& out) {
  out = SafetensorsShardIndex{};
  const std::string file = std::string(kShardIndexFile) + ": ";
  Json index;
  std::string error = parse_json(text, index);
  if (!error.empty()) return file + "not JSON: " + error;
  if (!index.is_object()) return file + "must hold a JSON object";
  const Json* map = index.find("weight_map");
  if (!map || !map->is_object()) return file + "has no \"weight_map\" object (tensor name -> shard file)";
  if (map->keys().empty()) return file + "its \"weight_map\" names no tensor";
  SafetensorsShardIndex parsed;
  for (std::size_t i = 0; i < map->keys().size(); ++i) {
    const std::string& tensor = map->keys()[i];
    const Json& shard = map->values()[i];
    if (!shard.is_string()) return file + "tensor \"" + tensor.substr(0, 80) + "\"'s shard must be a file name, got " + Json::js_typeof(&shard);
    error = shard_name_problem(shard.as_string());
    if (!error.empty()) return file + error;
    if (!parsed.weight_map.emplace(tensor, shard.as_string()).second)
      return file + "tensor \"" + tensor.substr(0, 80) + "\" is named twice in \"weight_map\"";
    if (parsed.shard_of(shard.as_string()) < 0) {
      if (parsed.shards.size() == kMaxShards) return file + "names more than " + std::to_string(kMaxShards) + " shards";
      parsed.shards.push_back(shard.as_string());
    }
  }
  out = std::move(parsed);
  return {};
}

}  // namespace attnlab
