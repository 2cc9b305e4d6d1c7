#pragma once
// A restricted unpickler for PyTorch checkpoints (weights_only loading). No Tensor here (only
// <ember/error.h> and the dtype enum), so the fuzzer compiles this unit alone.
//
// Note [Restricted unpickling]
// Python's pickle runs code: GLOBAL names any importable callable and REDUCE calls it. This
// reader runs nothing. It knows a fixed set of globals (collections.OrderedDict, torch's tensor
// and parameter rebuild functions, storage types, dtypes, torch.Size, set/frozenset and
// _codecs.encode for protocol-2 bytes) and interprets them itself; any other global is refused
// by name before anything else happens. Objects live in an arena owned by the result, so
// reference cycles built with the memo cannot leak, and values refer to them by pointer, so
// memo sharing (two keys naming one tensor, one storage behind many tensors) survives. Every
// length is checked against the bytes that remain, memo indices go to a hash map, and parsing is
// iterative, so no input can make it recurse, allocate far beyond its own size, or loop.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ember/dtype.h"

namespace ember::pickle {

/// What a Value or Object is.
enum class Kind : uint8_t {
  None,
  Bool,
  Int,
  Float,
  Dtype,  ///< a torch dtype global (Value::i holds the ScalarType)
  // Kinds below live in an Object:
  BigInt,  ///< an integer beyond 64 bits: Object::str holds it little-endian, two's complement
  Str,     ///< UTF-8 (validated)
  Bytes,
  List,
  Tuple,
  Dict,  ///< Object::items holds key0, value0, key1, value1, ... in insertion order
  Set,
  Global,   ///< one of the allowed callables (Object::callable)
  Storage,  ///< a storage record of the archive (Object::storage)
  Tensor,   ///< a tensor over a storage (Object::tensor)
};

/// The allowed globals that can be called or instantiated.
enum class Callable : uint8_t {
  OrderedDict,
  RebuildTensor,              // torch._utils._rebuild_tensor(storage, offset, size, stride)
  RebuildTensorV2,            // ..._v2(storage, offset, size, stride, requires_grad, hooks[, meta])
  RebuildParameter,           // torch._utils._rebuild_parameter(data, requires_grad, hooks)
  RebuildParameterWithState,  // ..._with_state(data, requires_grad, hooks, state)
  RebuildFromTypeV2,          // torch._tensor._rebuild_from_type_v2(func, new_type, args, state)
  ParameterClass,             // torch.nn.parameter.Parameter
  TensorClass,                // torch.Tensor
  Size,                       // torch.Size
  StorageType,                // torch.FloatStorage, ... (Object::dtype)
  Set,                        // builtins.set
  FrozenSet,                  // builtins.frozenset
  Bytes,                      // builtins.bytes() (empty bytes in protocol 2)
  CodecsEncode,               // _codecs.encode(str, "latin1"): bytes in protocol 2
};

struct Object;

/// A value on the unpickler's stack: scalars inline, everything else an arena Object.
struct Value {
  Kind kind = Kind::None;
  int64_t i = 0;  ///< Bool, Int, Dtype
  double f = 0;   ///< Float
  Object* obj = nullptr;
};

/// A storage record: ('storage', storage_type, key, location, numel).
struct StorageInfo {
  std::string key;
  std::string location;  ///< "cpu", "cuda:0", ...
  ScalarType dtype = ScalarType::Byte;
  int64_t numel = 0;  ///< elements of `dtype`
  size_t index = 0;   ///< position in Result::storages
};

/// A tensor: a strided view of a storage.
struct TensorInfo {
  Object* storage = nullptr;  ///< a Kind::Storage object
  int64_t offset = 0;         ///< in elements
  std::vector<int64_t> sizes, strides;
  bool requires_grad = false;
  bool parameter = false;  ///< rebuilt as torch.nn.Parameter
};

/// A heap value of the unpickled graph.
struct Object {
  Kind kind;
  bool ordered = false;  ///< Dict: an OrderedDict; Tuple: a torch.Size; Set: a frozenset
  Callable callable = Callable::OrderedDict;  ///< Global
  ScalarType dtype = ScalarType::Byte;        ///< Global StorageType
  std::string str;                            ///< Str, Bytes, BigInt; Global: its dotted name
  std::vector<Value> items;                   ///< List, Tuple, Set, Dict (alternating k, v)
  std::vector<Value> attrs;  ///< Dict: attributes set by BUILD (alternating name, value)
  std::unique_ptr<StorageInfo> storage;
  std::unique_ptr<TensorInfo> tensor;
  explicit Object(Kind k) : kind(k) {}
};

/// The unpickled graph and the arena that owns it.
struct Result {
  std::vector<std::unique_ptr<Object>> arena;
  Value root;
  std::vector<Object*> storages;  ///< distinct storage records, in first-use order
};

/// Unpickles `data` (protocols 2 to 5; no out-of-band buffers or extension codes). Throws
/// ember::Error "[<op>] <where>: ..." on malformed input or a refused global.
Result unpickle(std::string_view data, const std::string& where, const char* op = "load_pt");

/// Python's name for a dtype ("float32"), used in messages.
const char* dtype_name_py(ScalarType t);

}  // namespace ember::pickle
