#include "torch_pickle.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "utf8.h"
#include "zip_reader.h"

namespace attnlab {

namespace {

// Every opcode of pickle protocols 0-5 (Python's pickletools.opcodes), for messages that name the one
// refused. Only those marked `true` are run.
struct OpcodeInfo {
  std::uint8_t code;
  const char* name;
  bool allowed;
};
constexpr OpcodeInfo kOpcodes[] = {
    {0x28, "MARK", true},          {0x29, "EMPTY_TUPLE", true},  {0x2e, "STOP", true},
    {0x30, "POP", false},          {0x31, "POP_MARK", false},    {0x32, "DUP", false},
    {0x42, "BINBYTES", false},     {0x43, "SHORT_BINBYTES", false}, {0x46, "FLOAT", false},
    {0x47, "BINFLOAT", false},     {0x49, "INT", false},         {0x4a, "BININT", true},
    {0x4b, "BININT1", true},       {0x4c, "LONG", false},        {0x4d, "BININT2", true},
    {0x4e, "NONE", true},          {0x50, "PERSID", false},      {0x51, "BINPERSID", true},
    {0x52, "REDUCE", true},        {0x53, "STRING", false},      {0x54, "BINSTRING", false},
    {0x55, "SHORT_BINSTRING", false}, {0x56, "UNICODE", false},  {0x58, "BINUNICODE", true},
    {0x5d, "EMPTY_LIST", false},   {0x61, "APPEND", false},      {0x62, "BUILD", true},
    {0x63, "GLOBAL", true},        {0x64, "DICT", false},        {0x65, "APPENDS", false},
    {0x67, "GET", false},          {0x68, "BINGET", true},       {0x69, "INST", false},
    {0x6a, "LONG_BINGET", true},   {0x6c, "LIST", false},        {0x6f, "OBJ", false},
    {0x70, "PUT", false},          {0x71, "BINPUT", true},       {0x72, "LONG_BINPUT", true},
    {0x73, "SETITEM", true},       {0x74, "TUPLE", true},        {0x75, "SETITEMS", true},
    {0x7d, "EMPTY_DICT", true},    {0x80, "PROTO", true},        {0x81, "NEWOBJ", false},
    {0x82, "EXT1", false},         {0x83, "EXT2", false},        {0x84, "EXT4", false},
    {0x85, "TUPLE1", true},        {0x86, "TUPLE2", true},       {0x87, "TUPLE3", true},
    {0x88, "NEWTRUE", true},       {0x89, "NEWFALSE", true},     {0x8a, "LONG1", true},
    {0x8b, "LONG4", false},        {0x8c, "SHORT_BINUNICODE", false}, {0x8d, "BINUNICODE8", false},
    {0x8e, "BINBYTES8", false},    {0x8f, "EMPTY_SET", false},   {0x90, "ADDITEMS", false},
    {0x91, "FROZENSET", false},    {0x92, "NEWOBJ_EX", false},   {0x93, "STACK_GLOBAL", false},
    {0x94, "MEMOIZE", false},      {0x95, "FRAME", false},       {0x96, "BYTEARRAY8", false},
    {0x97, "NEXT_BUFFER", false},  {0x98, "READONLY_BUFFER", false},
};

const OpcodeInfo* opcode_info(std::uint8_t code) {
  for (const auto& op : kOpcodes)
    if (op.code == code) return &op;
  return nullptr;
}

std::string hex2(std::uint8_t v) {
  static const char* xdigits = "0123456789abcdef";
  return std::string("0x") + xdigits[v >> 4] + xdigits[v & 15];
}

// The storage types torch.save names (torch/storage.py's _LegacyStorage subclasses), with our dtypes.
struct StorageType {
  const char* name;
  const char* dtype;
};
constexpr StorageType kStorageTypes[] = {
    {"FloatStorage", "F32"}, {"DoubleStorage", "F64"}, {"HalfStorage", "F16"}, {"BFloat16Storage", "BF16"},
    {"LongStorage", "I64"},  {"IntStorage", "I32"},    {"ShortStorage", "I16"}, {"CharStorage", "I8"},
    {"ByteStorage", "U8"},   {"BoolStorage", "BOOL"},
};

enum class Kind : std::uint8_t { none, boolean, integer, string, tuple, dict, global, storage, tensor };

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::none: return "None";
    case Kind::boolean: return "a bool";
    case Kind::integer: return "an integer";
    case Kind::string: return "a string";
    case Kind::tuple: return "a tuple";
    case Kind::dict: return "a dict";
    case Kind::global: return "a global";
    case Kind::storage: return "a storage";
    case Kind::tensor: return "a tensor";
  }
  return "?";
}

enum Global : std::int64_t { kOrderedDict = 0, kRebuildTensorV2 = 1, kStorageType = 2 };

// One object the pickle built. Strings and tuple items live in shared arrays (begin, count), so an
// object is 24 bytes whatever it holds.
struct Object {
  Kind kind;
  std::int64_t a = 0;  // integer or bool value; Global tag; storage, tensor or dict index
  std::uint32_t begin = 0, count = 0;  // string bytes in text_, tuple items in items_; storage type index
};

// A dict: (key, value) objects in insertion order. Keys are not looked up as they are set: only the
// state_dict's names matter, and finish() refuses a name set twice (Python would keep the last value;
// torch.save never writes one twice). Hashing keys as they came could be made quadratic: a 64 KB key
// set again and again at 5 bytes a time.
struct Dict {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> items;
};

class Unpickler {
 public:
  Unpickler(const std::uint8_t* data, std::uint64_t size, const std::string& entry_name)
      : data_(data), size_(size), where_("pytorch_model.bin: entry " + zip_shown_name(entry_name)) {}

  std::string run(TorchPickle& out) {
    if (size_ > kTorchPickleMaxBytes)
      return where_ + " has " + std::to_string(size_) + " bytes; a state_dict's pickle over " +
             std::to_string(kTorchPickleMaxBytes) + " bytes is refused";
    // Singletons, as in Python: None, False, True and () are never copied.
    none_ = add({Kind::none});
    false_ = add({Kind::boolean, 0});
    true_ = add({Kind::boolean, 1});
    empty_tuple_ = add({Kind::tuple});
    std::uint32_t result = 0;
    bool stopped = false;
    while (!stopped) {
      if (at_ >= size_) return fail_at(size_, "the pickle ends without STOP");
      op_at_ = at_;
      const std::uint8_t code = data_[at_++];
      const OpcodeInfo* info = opcode_info(code);
      if (!info) return fail("opcode " + hex2(code) + " is not a pickle opcode");
      op_ = info->name;
      if (op_at_ == 0 && code != 0x80) return fail(std::string("the pickle starts with ") + op_ + ", not PROTO 2: torch.save writes protocol 2");
      if (!info->allowed) return fail("opcode " + hex2(code) + " (" + op_ + ") is not one torch.save writes for a state_dict");
      std::string error = step(code, stopped, result);
      if (!error.empty()) return error;
    }
    if (at_ != size_) return fail_at(at_, std::to_string(size_ - at_) + " bytes follow STOP");
    return finish(result, out);
  }

 private:
  // ---- one opcode

  std::string step(std::uint8_t code, bool& stopped, std::uint32_t& result) {
    std::string error;
    switch (code) {
      case 0x80: {  // PROTO
        std::uint64_t v;
        if (!(error = arg(1, v)).empty()) return error;
        if (op_at_ != 0) return fail("PROTO after the first byte");
        if (v != 2) return fail("pickle protocol " + std::to_string(v) + ": torch.save writes protocol 2");
        return {};
      }
      case 0x2e: {  // STOP
        if (!marks_.empty()) return fail("STOP with " + std::to_string(marks_.size()) + " MARK(s) still open");
        if (stack_.size() != 1) return fail("STOP with " + std::to_string(stack_.size()) + " values on the stack; one is the result");
        result = stack_.back();
        stopped = true;
        return {};
      }
      case 0x28:  // MARK
        if (marks_.size() >= kTorchPickleMaxMarks) return fail("more than " + std::to_string(kTorchPickleMaxMarks) + " nested MARKs");
        marks_.push_back(stack_.size());
        return {};
      case 0x4e: return push(none_);
      case 0x88: return push(true_);
      case 0x89: return push(false_);
      case 0x29: return push(empty_tuple_);
      case 0x7d: {  // EMPTY_DICT
        dicts_.emplace_back();
        return push_new({Kind::dict, std::int64_t(dicts_.size() - 1)});
      }
      case 0x4b: case 0x4d: case 0x4a: {  // BININT1, BININT2 (unsigned), BININT (signed 32-bit)
        const int bytes = code == 0x4b ? 1 : code == 0x4d ? 2 : 4;
        std::uint64_t v;
        if (!(error = arg(bytes, v)).empty()) return error;
        const std::int64_t value = bytes == 4 ? std::int64_t(std::int32_t(std::uint32_t(v))) : std::int64_t(v);
        return push_new({Kind::integer, value});
      }
      case 0x8a: {  // LONG1: a length byte, then that many bytes of little-endian two's complement
        std::uint64_t length;
        if (!(error = arg(1, length)).empty()) return error;
        if (length > 8) return fail("LONG1 of " + std::to_string(length) + " bytes: a state_dict has no integer past 64 bits");
        std::uint64_t v;
        if (!(error = arg(int(length), v)).empty()) return error;
        if (length > 0 && length < 8 && (v >> (8 * length - 1)) & 1) v |= ~std::uint64_t(0) << (8 * length);  // sign-extend
        return push_new({Kind::integer, std::int64_t(v)});
      }
      case 0x58: {  // BINUNICODE: a 4-byte length, then UTF-8
        std::uint64_t length;
        if (!(error = arg(4, length)).empty()) return error;
        if (length > size_ - at_)
          return fail("BINUNICODE of " + std::to_string(length) + " bytes runs past the end of the pickle (" +
                      std::to_string(size_ - at_) + " bytes remain)");
        if (length > kTorchPickleMaxString)
          return fail("BINUNICODE of " + std::to_string(length) + " bytes: names in a state_dict are shorter than " +
                      std::to_string(kTorchPickleMaxString));
        if (!is_utf8(data_ + at_, std::size_t(length))) return fail("BINUNICODE holds text that is not UTF-8");
        Object s{Kind::string, 0, std::uint32_t(text_.size()), std::uint32_t(length)};
        text_.append(reinterpret_cast<const char*>(data_ + at_), std::size_t(length));
        at_ += length;
        return push_new(s);
      }
      case 0x71: case 0x72: {  // BINPUT, LONG_BINPUT: memo[key] = top of the stack
        std::uint64_t key;
        if (!(error = arg(code == 0x71 ? 1 : 4, key)).empty()) return error;
        if (stack_.size() == fence()) return fail(std::string(op_) + " with nothing on the stack");
        if (key >= kTorchPickleMaxMemoKey)
          return fail(std::string(op_) + " " + std::to_string(key) + ": memo keys past " + std::to_string(kTorchPickleMaxMemoKey) + " are refused");
        if (key >= memo_.size()) memo_.resize(std::size_t(key) + 1, kUnset);
        memo_[std::size_t(key)] = stack_.back();
        return {};
      }
      case 0x68: case 0x6a: {  // BINGET, LONG_BINGET
        std::uint64_t key;
        if (!(error = arg(code == 0x68 ? 1 : 4, key)).empty()) return error;
        if (key >= memo_.size() || memo_[std::size_t(key)] == kUnset)
          return fail(std::string(op_) + " " + std::to_string(key) + ": nothing was memoized under " + std::to_string(key));
        return push(memo_[std::size_t(key)]);
      }
      case 0x63: return global();
      case 0x74: {  // TUPLE: everything above the last MARK
        if (marks_.empty()) return fail("TUPLE without a MARK");
        const std::size_t from = marks_.back();
        marks_.pop_back();
        return make_tuple(from);
      }
      case 0x85: case 0x86: case 0x87: {  // TUPLE1, TUPLE2, TUPLE3
        const std::size_t k = std::size_t(code - 0x84);
        if (!(error = need(k)).empty()) return error;
        return make_tuple(stack_.size() - k);
      }
      case 0x51: return persistent_id();
      case 0x52: return reduce();
      case 0x62: return build();
      case 0x73: {  // SETITEM: dict key value -> dict
        if (!(error = need(3)).empty()) return error;
        const std::uint32_t value = pop(), key = pop();
        return set_item(stack_.back(), key, value);
      }
      case 0x75: {  // SETITEMS: dict MARK key value key value ... -> dict
        if (marks_.empty()) return fail("SETITEMS without a MARK");
        const std::size_t from = marks_.back();
        marks_.pop_back();
        if (from == fence()) return fail("SETITEMS with no dict below its MARK");
        if ((stack_.size() - from) % 2 != 0) return fail("SETITEMS with an odd number of values (a key without its value)");
        for (std::size_t i = from; i < stack_.size(); i += 2) {
          if (!(error = set_item(stack_[from - 1], stack_[i], stack_[i + 1])).empty()) return error;
        }
        stack_.resize(from);
        return {};
      }
    }
    return fail(std::string("opcode ") + op_ + " has no handler");  // unreachable: every allowed opcode is above
  }

  // GLOBAL: "module\nname\n", matched against the allowlist; the tag is pushed, nothing is imported.
  std::string global() {
    std::string module, name;
    std::string error = line(module);
    if (error.empty()) error = line(name);
    if (!error.empty()) return error;
    Object g{Kind::global};
    if (module == "collections" && name == "OrderedDict") {
      g.a = kOrderedDict;
    } else if (module == "torch._utils" && name == "_rebuild_tensor_v2") {
      g.a = kRebuildTensorV2;
    } else {
      bool known = false;
      if (module == "torch") {
        for (std::uint32_t i = 0; i < sizeof kStorageTypes / sizeof kStorageTypes[0]; ++i) {
          if (name == kStorageTypes[i].name) {
            g.a = kStorageType;
            g.count = i;
            known = true;
          }
        }
      }
      if (!known)
        return fail("the pickle names " + shown_global(module, name) +
                    ": only collections.OrderedDict, torch._utils._rebuild_tensor_v2 and the storage types may appear; nothing is called");
    }
    return push_new(g);
  }

  // BINPERSID: ('storage', storage type, key, location, numel) -> a storage reference.
  std::string persistent_id() {
    std::string error = need(1);
    if (!error.empty()) return error;
    const Object pid = objects_[pop()];
    const std::string expected = "a persistent id ('storage', storage type, key, location, numel)";
    if (pid.kind != Kind::tuple || pid.count != 5) return fail("BINPERSID of " + describe(pid) + "; torch writes " + expected);
    const Object tag = item(pid, 0), type = item(pid, 1), key = item(pid, 2), location = item(pid, 3), numel = item(pid, 4);
    if (tag.kind != Kind::string || !equals(tag, "storage") || type.kind != Kind::global || type.a != kStorageType ||
        key.kind != Kind::string || location.kind != Kind::string || numel.kind != Kind::integer)
      return fail("BINPERSID of a tuple that is not " + expected);
    if (numel.a < 0) return fail("storage " + quote(text(key)) + " has " + std::to_string(numel.a) + " elements");
    if (key.count == 0) return fail("a storage with an empty key");
    // torch.save's keys are short decimal numbers; a long one would be hashed at every reference.
    if (key.count > kTorchStorageKeyMax)
      return fail("a storage key of " + std::to_string(key.count) + " bytes; more than " + std::to_string(kTorchStorageKeyMax) + " are refused");
    const std::string dtype = kStorageTypes[type.count].dtype;
    // The same key again (a storage shared by several tensors) must say the same thing.
    const std::string k = text(key);
    auto it = storage_index_.find(k);
    if (it == storage_index_.end()) {
      if (storages_.size() >= kTorchPickleMaxTensors)
        return fail("more than " + std::to_string(kTorchPickleMaxTensors) + " storages");
      it = storage_index_.emplace(k, storages_.size()).first;
      storages_.push_back({k, dtype, numel.a});
    } else {
      const TorchStorage& s = storages_[it->second];
      if (s.dtype != dtype || s.numel != numel.a)
        return fail("storage " + quote(k) + " is named as " + std::to_string(numel.a) + " x " + dtype + " here and as " +
                    std::to_string(s.numel) + " x " + s.dtype + " before");
    }
    return push_new({Kind::storage, std::int64_t(it->second)});
  }

  // REDUCE: callable args -> callable(*args), for the two callables allowed, interpreted here.
  std::string reduce() {
    std::string error = need(2);
    if (!error.empty()) return error;
    const std::uint32_t args_id = pop(), callable_id = pop();
    const Object args = objects_[args_id], callable = objects_[callable_id];
    if (callable.kind != Kind::global) return fail("REDUCE applies " + describe(callable) + ", not a function");
    if (args.kind != Kind::tuple) return fail("REDUCE with " + describe(args) + " for arguments, not a tuple");
    if (callable.a == kOrderedDict) {
      if (args.count != 0) return fail("OrderedDict() with " + std::to_string(args.count) + " arguments; torch.save writes none");
      dicts_.emplace_back();
      return push_new({Kind::dict, std::int64_t(dicts_.size() - 1)});
    }
    if (callable.a == kStorageType)
      return fail("REDUCE applies torch." + std::string(kStorageTypes[callable.count].name) +
                  ": a storage type may only appear inside a storage reference (BINPERSID)");
    return rebuild_tensor(args);
  }

  // _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata])
  std::string rebuild_tensor(const Object& args) {
    const std::string call = "_rebuild_tensor_v2";
    if (args.count != 6 && args.count != 7)
      return fail(call + " with " + std::to_string(args.count) +
                  " arguments; it takes (storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata])");
    const Object storage = item(args, 0), offset = item(args, 1), size = item(args, 2), stride = item(args, 3);
    const Object requires_grad = item(args, 4), hooks = item(args, 5);
    if (storage.kind != Kind::storage) return fail(call + "'s storage is " + describe(storage));
    if (offset.kind != Kind::integer || offset.a < 0) return fail(call + "'s storage_offset is " + describe(offset) + ", not an integer >= 0");
    if (requires_grad.kind != Kind::boolean) return fail(call + "'s requires_grad is " + describe(requires_grad) + ", not a bool");
    if (hooks.kind != Kind::dict || !dicts_[std::size_t(hooks.a)].items.empty())
      return fail(call + "'s backward_hooks are " + describe(hooks) + "; torch.save writes an empty OrderedDict");
    if (args.count == 7) {
      const Object metadata = item(args, 6);
      if (metadata.kind != Kind::none && (metadata.kind != Kind::dict || !dicts_[std::size_t(metadata.a)].items.empty()))
        return fail(call + "'s metadata is " + describe(metadata) + "; only None or an empty dict is read (nothing it would set is applied)");
    }
    if (tensors_.size() >= kTorchPickleMaxTensors) return fail("more than " + std::to_string(kTorchPickleMaxTensors) + " tensors");
    if (size.kind == Kind::tuple && (rebuilt_dims_ += size.count) > kTorchPickleMaxDims)
      return fail("the tensors have more than " + std::to_string(kTorchPickleMaxDims) + " dimensions in all");
    TorchTensor t;
    std::string error = int_tuple(size, "size", t.shape);
    if (error.empty()) error = int_tuple(stride, "stride", t.stride);
    if (!error.empty()) return error;
    if (t.shape.size() != t.stride.size())
      return fail(call + " with a size of " + std::to_string(t.shape.size()) + " dimensions and a stride of " + std::to_string(t.stride.size()));
    const TorchStorage& s = storages_[std::size_t(storage.a)];
    t.dtype = s.dtype;
    t.storage = std::size_t(storage.a);
    t.storage_offset = offset.a;
    // The elements reached: offset + sum((size - 1) x stride) must lie inside the storage (each step
    // checked, so no product or sum wraps); a tensor with no elements reaches nothing (torch's
    // set_() checks nothing for it either).
    std::int64_t numel = 1, last = 0;
    for (std::size_t d = 0; d < t.shape.size(); ++d) {
      if (__builtin_mul_overflow(numel, t.shape[d], &numel))
        return fail("a tensor of size " + dims(t.shape) + " has more elements than 64 bits count");
    }
    if (numel > 0) {
      for (std::size_t d = 0; d < t.shape.size(); ++d) {
        std::int64_t reach;
        if (__builtin_mul_overflow(t.shape[d] - 1, t.stride[d], &reach) || __builtin_add_overflow(last, reach, &last))
          return fail(tensor_text(t, s) + " reaches past 64 bits");
      }
      std::int64_t end;
      if (__builtin_add_overflow(t.storage_offset, last, &end) || end >= s.numel)
        return fail(tensor_text(t, s) + " reaches past its storage");
      t.span = last + 1;
      error = check_overlap(t, numel);
      if (!error.empty()) return fail(error);
    }
    tensors_.push_back(std::move(t));
    return push_new({Kind::tensor, std::int64_t(tensors_.size() - 1)});
  }

  // BUILD: obj state -> obj with state set. torch.save writes it for a module's state_dict, whose
  // OrderedDict carries `_metadata` (each submodule's version) as an attribute; that is not kept.
  std::string build() {
    std::string error = need(2);
    if (!error.empty()) return error;
    const Object state = objects_[pop()];
    const Object target = objects_[stack_.back()];
    if (target.kind != Kind::dict || state.kind != Kind::dict)
      return fail("BUILD sets " + describe(state) + " on " + describe(target) + "; torch.save only sets a dict of attributes on an OrderedDict");
    return {};
  }

  std::string set_item(std::uint32_t dict_id, std::uint32_t key_id, std::uint32_t value_id) {
    const Object d = objects_[dict_id], key = objects_[key_id];
    if (d.kind != Kind::dict) return fail(std::string(op_) + " on " + describe(d) + ", not a dict");
    if (key.kind != Kind::string && key.kind != Kind::integer && key.kind != Kind::boolean && key.kind != Kind::none)
      return fail(std::string(op_) + " with " + describe(key) + " for a key");
    if (dict_items_ >= kTorchPickleMaxDictItems)
      return fail("more than " + std::to_string(kTorchPickleMaxDictItems) + " dict items in all");
    ++dict_items_;
    dicts_[std::size_t(d.a)].items.emplace_back(key_id, value_id);
    return {};
  }

  // ---- the result: a dict of names to tensors

  std::string finish(std::uint32_t result, TorchPickle& out) {
    const Object top = objects_[result];
    // torch.save(tensor, 'x.pt'): one tensor, read as a state_dict of one entry named "tensor" (the
    // build-it checker opens a student's printed intermediate this way).
    if (top.kind == Kind::tensor) {
      TorchPickle pickle;
      pickle.tensors.push_back(tensors_[std::size_t(top.a)]);
      pickle.tensors.back().name = "tensor";
      pickle.storages = std::move(storages_);
      out = std::move(pickle);
      return {};
    }
    if (top.kind != Kind::dict)
      return fail_at(size_, "the pickle holds " + describe(top) + "; a state_dict is a dict of names to tensors");
    TorchPickle pickle;
    const auto& entries = dicts_[std::size_t(top.a)].items;
    if (entries.size() > kTorchPickleMaxTensors)
      return fail_at(size_, "the state_dict has " + std::to_string(entries.size()) + " entries; more than " +
                                std::to_string(kTorchPickleMaxTensors) + " are refused");
    std::size_t dims = 0;
    std::unordered_set<std::string> names;
    for (const auto& [key_id, value_id] : entries) {
      const Object key = objects_[key_id], value = objects_[value_id];
      if (key.kind != Kind::string) return fail_at(size_, "the state_dict has " + describe(key) + " for a key; its keys are names");
      if (value.kind != Kind::tensor)
        return fail_at(size_, "the state_dict's " + quote(text(key)) + " holds " + describe(value) +
                                  ", not a tensor (a checkpoint of more than a state_dict is not read)");
      // A tied tensor is copied under each of its names: the copies are bounded too.
      if ((dims += tensors_[std::size_t(value.a)].shape.size()) > kTorchPickleMaxDims)
        return fail_at(size_, "the state_dict's tensors have more than " + std::to_string(kTorchPickleMaxDims) + " dimensions in all");
      TorchTensor t = tensors_[std::size_t(value.a)];
      t.name = text(key);
      if (!names.insert(t.name).second) return fail_at(size_, "the state_dict names " + quote(t.name) + " twice");
      pickle.tensors.push_back(std::move(t));
    }
    pickle.storages = std::move(storages_);
    out = std::move(pickle);
    return {};
  }

  // ---- the stack, objects and arguments

  static constexpr std::uint32_t kUnset = 0xFFFFFFFF;

  std::uint32_t add(const Object& o) {
    objects_.push_back(o);
    return std::uint32_t(objects_.size() - 1);
  }
  std::string push_new(const Object& o) {
    if (objects_.size() >= kTorchPickleMaxObjects)
      return fail("more than " + std::to_string(kTorchPickleMaxObjects) + " objects; a state_dict's pickle builds about 15 per tensor");
    return push(add(o));
  }
  std::string push(std::uint32_t id) {
    if (stack_.size() >= kTorchPickleMaxStack) return fail("more than " + std::to_string(kTorchPickleMaxStack) + " values on the stack");
    stack_.push_back(id);
    return {};
  }
  std::uint32_t pop() {
    const std::uint32_t id = stack_.back();
    stack_.pop_back();
    return id;
  }
  // Values below the innermost MARK belong to whoever set it: other opcodes may not pop them (Python's
  // "unpickling stack underflow").
  std::size_t fence() const { return marks_.empty() ? 0 : marks_.back(); }
  std::string need(std::size_t k) {
    const std::size_t have = stack_.size() - fence();
    if (have >= k) return {};
    return fail(std::string(op_) + " needs " + std::to_string(k) + " value" + (k == 1 ? "" : "s") + " on the stack" +
                (marks_.empty() ? "" : " above its MARK") + "; there " + (have == 1 ? "is " : "are ") + std::to_string(have));
  }

  std::string make_tuple(std::size_t from) {
    if (from == stack_.size()) {
      stack_.resize(from);
      return push(empty_tuple_);
    }
    // None, True and () cost no object, so a tuple of them is the cheapest way to fill memory: capped.
    if (items_.size() + (stack_.size() - from) > kTorchPickleMaxTupleItems)
      return fail("more than " + std::to_string(kTorchPickleMaxTupleItems) + " tuple items in all");
    Object t{Kind::tuple, 0, std::uint32_t(items_.size()), std::uint32_t(stack_.size() - from)};
    items_.insert(items_.end(), stack_.begin() + std::ptrdiff_t(from), stack_.end());
    stack_.resize(from);
    return push_new(t);
  }

  // A little-endian unsigned argument of `bytes` bytes.
  std::string arg(int bytes, std::uint64_t& v) {
    if (std::uint64_t(bytes) > size_ - at_) return fail_at(size_, std::string("the pickle ends inside ") + op_ + "'s argument");
    v = 0;
    for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | data_[at_ + std::uint64_t(i)];
    at_ += std::uint64_t(bytes);
    return {};
  }
  // GLOBAL's text up to a newline: at most 256 bytes (module and function names are short).
  std::string line(std::string& s) {
    const std::uint64_t limit = std::min<std::uint64_t>(size_ - at_, 257);
    for (std::uint64_t i = 0; i < limit; ++i) {
      if (data_[at_ + i] == '\n') {
        s.assign(reinterpret_cast<const char*>(data_ + at_), std::size_t(i));
        at_ += i + 1;
        return {};
      }
    }
    if (limit == size_ - at_) return fail_at(size_, "the pickle ends inside GLOBAL's names");
    return fail("GLOBAL with a name over 256 bytes");
  }

  Object item(const Object& tuple, std::uint32_t i) const { return objects_[items_[tuple.begin + i]]; }
  std::string text(const Object& s) const { return text_.substr(s.begin, s.count); }
  bool equals(const Object& s, const char* literal) const { return text_.compare(s.begin, s.count, literal) == 0; }

  // An expanded tensor (stride 0, as torch.zeros(1).expand(1000, 1000, 1000) saves), or any strides that
  // make two indices meet, lets a few bytes of a file stand for gigabytes of floats. torch reads such a
  // tensor, and so does this reader while its elements number at most kTorchMaxOverlappingElements;
  // beyond, it is refused before anything is allocated. Overlap is found by a sufficient test: with the
  // axes of size > 1 sorted by stride, each stride must exceed the farthest reach of the axes before it
  // (as in a contiguous, transposed or sliced tensor, whose elements then number at most its storage's).
  static std::string check_overlap(const TorchTensor& t, std::int64_t numel) {
    std::vector<std::size_t> axes;
    for (std::size_t d = 0; d < t.shape.size(); ++d)
      if (t.shape[d] > 1) axes.push_back(d);
    std::sort(axes.begin(), axes.end(), [&](std::size_t a, std::size_t b) { return t.stride[a] < t.stride[b]; });
    std::int64_t reach = 0;  // the farthest element the axes so far reach from the first (< 2^63: checked before)
    for (std::size_t d : axes) {
      if (t.stride[d] <= reach) {
        if (numel <= kTorchMaxOverlappingElements) return {};
        const std::string why = t.stride[d] == 0 ? "is expanded (stride 0 on axis " + std::to_string(d) + ")"
                                                 : "has strides " + dims(t.stride) + " whose elements overlap";
        return "a tensor of size " + dims(t.shape) + " " + why + ": its " + std::to_string(numel) +
               " elements repeat values of the file, more than the " + std::to_string(kTorchMaxOverlappingElements) +
               " read from such a tensor; save it with .contiguous()";
      }
      reach += (t.shape[d] - 1) * t.stride[d];
    }
    return {};
  }

  std::string int_tuple(const Object& t, const char* what, std::vector<std::int64_t>& out) {
    if (t.kind != Kind::tuple) return fail(std::string("_rebuild_tensor_v2's ") + what + " is " + describe(t) + ", not a tuple");
    if (t.count > kTorchMaxRank) return fail(std::string("_rebuild_tensor_v2's ") + what + " has " + std::to_string(t.count) +
                                             " dimensions; more than " + std::to_string(kTorchMaxRank) + " are refused");
    for (std::uint32_t i = 0; i < t.count; ++i) {
      const Object v = item(t, i);
      if (v.kind != Kind::integer || v.a < 0)
        return fail(std::string("_rebuild_tensor_v2's ") + what + " holds " + describe(v) + ", not an integer >= 0");
      out.push_back(v.a);
    }
    return {};
  }

  std::string describe(const Object& o) const {
    if (o.kind == Kind::integer) return "the integer " + std::to_string(o.a);
    if (o.kind == Kind::string) return "the string " + quote(text(o));
    if (o.kind == Kind::boolean) return o.a ? "True" : "False";
    if (o.kind == Kind::tuple) return "a tuple of " + std::to_string(o.count);
    if (o.kind == Kind::dict) return "a dict of " + std::to_string(dicts_[std::size_t(o.a)].items.size());
    if (o.kind == Kind::global)
      return o.a == kOrderedDict ? "collections.OrderedDict" : o.a == kRebuildTensorV2 ? "torch._utils._rebuild_tensor_v2"
                                                                                        : "torch." + std::string(kStorageTypes[o.count].name);
    return kind_name(o.kind);
  }
  static std::string quote(const std::string& s) { return zip_shown_name(s); }
  static std::string shown_global(const std::string& module, const std::string& name) {
    // Shown unquoted when plain (os.system), quoted when not (a hostile name can hold anything).
    const std::string joined = module + "." + name;
    for (char c : joined)
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.') || joined.size() > 100)
        return quote(joined);
    return joined;
  }
  static std::string dims(const std::vector<std::int64_t>& v) {
    std::string s = "(";
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s + (v.size() == 1 ? ",)" : ")");
  }
  static std::string tensor_text(const TorchTensor& t, const TorchStorage& s) {
    return "a tensor of size " + dims(t.shape) + ", stride " + dims(t.stride) + " at offset " + std::to_string(t.storage_offset) +
           " in storage " + quote(s.key) + " of " + std::to_string(s.numel) + " elements";
  }

  std::string fail(const std::string& what) const { return fail_at(op_at_, what); }
  std::string fail_at(std::uint64_t at, const std::string& what) const {
    return where_ + ", byte " + std::to_string(at) + ": " + what;
  }

  const std::uint8_t* data_;
  std::uint64_t size_;
  std::string where_;
  std::uint64_t at_ = 0, op_at_ = 0;
  const char* op_ = "";
  std::vector<Object> objects_;
  std::vector<std::uint32_t> items_;
  std::string text_;
  std::vector<Dict> dicts_;
  std::vector<std::uint32_t> stack_;
  std::vector<std::size_t> marks_;
  std::vector<std::uint32_t> memo_;
  std::vector<TorchTensor> tensors_;
  std::vector<TorchStorage> storages_;
  std::unordered_map<std::string, std::size_t> storage_index_;
  std::uint32_t none_ = 0, false_ = 0, true_ = 0, empty_tuple_ = 0;
  std::size_t rebuilt_dims_ = 0, dict_items_ = 0;
};

}  // namespace

std::size_t torch_dtype_size(const std::string& dtype) {
  if (dtype == "F32" || dtype == "I32") return 4;
  if (dtype == "F64" || dtype == "I64") return 8;
  if (dtype == "F16" || dtype == "BF16" || dtype == "I16") return 2;
  if (dtype == "I8" || dtype == "U8" || dtype == "BOOL") return 1;
  return 0;
}

std::int64_t TorchTensor::numel() const {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;  // checked at parse
  return n;
}

bool TorchTensor::is_contiguous() const {
  if (numel() == 0) return true;  // nothing to lay out (and the products below could overflow)
  std::int64_t expected = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    if (shape[d] != 1 && stride[d] != expected) return false;  // a dim of size 1 may have any stride
    expected *= shape[d];
  }
  return true;
}

const TorchTensor* TorchPickle::find(const std::string& name) const {
  for (const auto& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

std::string parse_torch_pickle(const std::uint8_t* data, std::uint64_t size, const std::string& entry_name, TorchPickle& out) {
  out = TorchPickle{};
  Unpickler unpickler(data, size, entry_name);
  return unpickler.run(out);
}

}  // namespace attnlab
