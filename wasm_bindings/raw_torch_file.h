// A state_dict saved with torch.save (a .pt or pytorch_model.bin of a small model: a training lab's,
// the course notebook's), read whole through core/io/torch_checkpoint.h: the ZIP archive, the restricted
// unpickler, every tensor's strides. For the weights import of the training labs (web/io/weights_file.js),
// where a file is a few MB; the checkpoint models stream theirs (raw_checkpoint.h).
//   _read(bytes) -> "" or what is wrong ("pytorch_model.bin: ..." messages, as the file is named there)
//   _count(), _name(i), _dtype(i), _shape(i), _floats(i) (a Float32Array copy; "" / undefined for a tensor
//   that is not a float: its dtype says which), _numbers(i) (integers too)
#pragma once

#include <emscripten/val.h>

#include <string>
#include <vector>

#include "io/torch_checkpoint.h"

namespace attnlab::wasm {

using emscripten::val;

class RawTorchFile {
 public:
  std::string _read(const val& bytes);
  int _count() const { return int(index_.tensors.size()); }
  std::string _name(int i) const { return ok(i) ? index_.tensors[std::size_t(i)].name : std::string(); }
  std::string _dtype(int i) const { return ok(i) ? index_.tensors[std::size_t(i)].dtype : std::string(); }
  val _shape(int i) const;
  val _floats(int i) const;
  // The same, integer and bool tensors included (as floats, exact up to 2^24): a student's printed tensor.
  val _numbers(int i) const;

 private:
  bool ok(int i) const { return i >= 0 && i < _count(); }
  std::vector<std::uint8_t> bytes_;
  TorchCheckpointIndex index_;
};

}  // namespace attnlab::wasm
