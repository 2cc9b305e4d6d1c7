#pragma once
// PyTorch's zip checkpoint layout on top of the zip reader and the restricted unpickler. No
// Tensor here, so the fuzzer compiles this unit alone.
//
// Note [PyTorch checkpoint layout]
// torch.save (PyTorch >= 1.6) writes a zip archive whose records share one top-level folder
// (the file's stem, or "archive" for buffers): <prefix>/data.pkl is the pickled object,
// <prefix>/data/<key> holds the bytes of storage <key> (little-endian unless
// <prefix>/byteorder says "big"), <prefix>/version the format version. Tensors in data.pkl are
// torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks) calls
// whose storage is the persistent id ('storage', torch.FloatStorage, key, location, numel).
// Pre-1.6 files are a bare pickle stream (they start with the PROTO opcode 0x80); TorchScript
// archives (torch.jit.save) hold a constants.pkl record.

#include <memory>
#include <string>
#include <string_view>

#include "serialize/pickle_reader.h"
#include "serialize/zip_reader.h"

namespace ember::pt {

/// An opened checkpoint. Throws ember::Error "[<op>] <where>: ..." when the archive is not a
/// torch.save checkpoint (NotImplementedError for TorchScript archives).
class Archive {
 public:
  Archive(std::shared_ptr<const zip::Source> source, std::string where, std::string op = "load_pt");
  /// The records' folder, with its trailing slash ("archive/").
  const std::string& prefix() const { return prefix_; }
  bool big_endian() const { return big_endian_; }
  const zip::Reader& zip() const { return zip_; }
  /// The bytes of record `name` (relative to the prefix); throws when it is missing.
  std::string read_record(std::string_view name) const;
  /// The bytes of data.pkl.
  std::string pickle_bytes() const { return read_record("data.pkl"); }
  /// data.pkl through the restricted unpickler, with every storage record checked to exist and
  /// to be large enough.
  pickle::Result unpickle_weights_only() const;
  /// Checks that storage `key` has a record of at least `nbytes` bytes.
  void check_storage(const std::string& key, uint64_t nbytes) const;
  /// Copies the first numel * itemsize bytes of storage `key` into `dst`, in native byte order.
  void read_storage(const std::string& key, ScalarType dtype, int64_t numel, void* dst) const;
  const std::string& where() const { return zip_.where(); }

 private:
  const zip::Entry& storage_entry(const std::string& key, uint64_t nbytes) const;
  zip::Reader zip_;
  std::string prefix_;
  bool big_endian_ = false;
};

/// True when the leading bytes are a pickle stream (PROTO), as pre-1.6 torch.save files are.
bool is_legacy_pickle(const uint8_t* data, size_t size);

/// What the leading bytes of a file are, for messages: "a zip archive", "a legacy (pre-1.6)
/// torch.save file", "a safetensors file", or the bytes in hex.
std::string describe_magic(const uint8_t* data, size_t size);

}  // namespace ember::pt
