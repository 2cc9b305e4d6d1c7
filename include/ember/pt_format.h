#pragma once
/// Reading PyTorch checkpoints (the zip files torch.save writes since PyTorch 1.6) without
/// Python, through a restricted unpickler that runs no code: it rebuilds tensors (views,
/// offsets, strides and shared storages kept), dicts, OrderedDicts, lists, tuples, sets, numbers,
/// strings, bytes and dtypes, and refuses every other Python global by name (as
/// torch.load(weights_only=True)). Malformed files throw ember::Error "[load_pt] <path>: ...";
/// the pre-1.6 format and TorchScript archives are refused with a message saying so.
///
///   auto sd = ember::load_pt("model.pt");          // {"fc.weight": Tensor, ...}
///   net->load_state_dict(sd);

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ember/device.h"
#include "ember/ordered_dict.h"
#include "ember/tensor.h"

namespace ember {

/// One value of an unpickled checkpoint: what torch.load returns, as a tree. Containers share
/// their children (a value referenced twice in the file is one node).
class PtValue {
 public:
  enum class Kind {
    None,
    Bool,
    Int,
    BigInt,
    Double,
    String,
    Bytes,
    Dtype,
    Tensor,
    List,
    Tuple,
    Dict,
    Set
  };
  using Items = std::vector<PtValue>;
  using Pairs = std::vector<std::pair<PtValue, PtValue>>;

  PtValue() = default;  ///< None
  static PtValue boolean(bool b);
  static PtValue integer(int64_t i);
  /// An integer beyond 64 bits, as little-endian two's complement bytes.
  static PtValue big_integer(std::string bytes);
  static PtValue real(double d);
  static PtValue string(std::string s);
  static PtValue bytes(std::string b);
  static PtValue dtype(ScalarType t);
  /// A tensor; `parameter` marks a torch.nn.Parameter.
  static PtValue tensor(Tensor t, bool parameter = false);
  /// A List, Tuple or Set; `flag` marks a torch.Size (Tuple) or a frozenset (Set).
  static PtValue sequence(Kind kind, Items items, bool flag = false);
  /// A dict in insertion order; `ordered` marks a collections.OrderedDict.
  static PtValue dict(Pairs pairs, bool ordered = false);

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::None; }
  bool is_tensor() const { return kind_ == Kind::Tensor; }
  bool is_dict() const { return kind_ == Kind::Dict; }
  /// The value as each type; ember::TypeError when the kind differs.
  bool to_bool() const;
  int64_t to_int() const;
  double to_double() const;              ///< Double or Int
  const std::string& to_string() const;  ///< String, Bytes or BigInt
  ScalarType to_dtype() const;
  const Tensor& to_tensor() const;
  const Items& items() const;  ///< List, Tuple or Set
  const Pairs& pairs() const;  ///< Dict
  /// Parameter (Tensor), torch.Size (Tuple), frozenset (Set), OrderedDict (Dict).
  bool flag() const { return flag_; }
  /// The value of `key` in a dict with string keys, or nullptr.
  const PtValue* find(const std::string& key) const;
  /// Python-like kind name: "dict", "tensor", ...
  const char* kind_name() const;

 private:
  Kind kind_ = Kind::None;
  bool flag_ = false;
  int64_t i_ = 0;
  double d_ = 0;
  ScalarType dtype_ = ScalarType::Undefined;
  std::shared_ptr<const std::string> s_;
  Tensor t_;
  std::shared_ptr<const Items> items_;
  std::shared_ptr<const Pairs> pairs_;
};

/// Loads a torch.save checkpoint from `path` as a tree. Tensors land on `device` (the CPU by
/// default, whatever device they were saved from).
PtValue load_pt_value(const std::string& path, Device device = Device(kCPU));
/// Same, from a checkpoint held in memory; `where` names it in messages.
PtValue load_pt_value(const void* data, size_t size, Device device = Device(kCPU),
                      const std::string& where = "<memory>");

/// Loads a state dict: the checkpoint flattened with flatten_pt, so a torch state_dict file
/// gives {"fc.weight": ..., ...} and {"model": state_dict, "epoch": 3} gives
/// {"model.fc.weight": ...}.
OrderedDict<std::string, Tensor> load_pt(const std::string& path, Device device = Device(kCPU));

/// The tensors of `v` under dotted keys: dict keys (strings, or integers in decimal) and list or
/// tuple indices joined with "." after `prefix`; a bare tensor at the top is "0" (as
/// ember::save(Tensor)). Other leaves (numbers, strings, None) are skipped. Throws TypeError for
/// a dict key that is neither a string nor an integer, and ember::Error when a container is
/// reached twice (flattening needs a tree) or two paths give one key.
OrderedDict<std::string, Tensor> flatten_pt(const PtValue& v, const std::string& prefix = "");

}  // namespace ember
