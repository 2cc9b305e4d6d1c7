// ember::load_pt: PyTorch checkpoints through the restricted unpickler (Note [Restricted
// unpickling], Note [PyTorch checkpoint layout]).
#include "ember/pt_format.h"

#include <unordered_map>
#include <unordered_set>

#include "ember/factory.h"
#include "serialize/pt_loader.h"

namespace ember {
namespace pt {

Tensor read_storage_tensor(const Archive& archive, const pickle::StorageInfo& s) {
  Tensor t = empty({s.numel}, TensorOptions().dtype(s.dtype));
  archive.read_storage(s.key, s.dtype, s.numel, t.data_ptr());
  return t;
}

Tensor make_tensor(const pickle::TensorInfo& info, const Storage& storage,
                   const std::string& where) {
  const pickle::StorageInfo& s = *info.storage->storage;
  EMBER_CHECK(storage.nbytes() >= uint64_t(s.numel) * elementSize(s.dtype), "[load_pt] ", where,
              ": storage '", s.key, "' was mapped to ", storage.nbytes(), " bytes, fewer than its ",
              uint64_t(s.numel) * elementSize(s.dtype));
  Tensor t(make_intrusive<TensorImpl>(storage, s.dtype, IntArrayRef(info.sizes),
                                      IntArrayRef(info.strides), info.offset));
  if (info.requires_grad && (isFloatingType(s.dtype) || isComplexType(s.dtype)))
    t.set_requires_grad(true);
  return t;
}

void throw_not_a_checkpoint(const uint8_t* head, size_t size, const std::string& where,
                            const char* op) {
  std::string what = describe_magic(head, size);
  if (is_legacy_pickle(head, size))
    EMBER_THROW(NotImplementedError, "[", op, "] ", where, " is ", what,
                ", which ember does not read; re-save it with PyTorch >= 1.6 "
                "(torch.save(torch.load(path), path))");
  EMBER_THROW(Error, "[", op, "] ", where,
              ": expected a torch.save checkpoint (a zip archive starting with \"PK\\x03\\x04\"), "
              "found ",
              what);
}

namespace {

constexpr int kMaxDepth = 1000;

// The arena graph as PtValues: shared nodes stay shared, cycles are refused.
class Converter {
 public:
  Converter(const std::vector<Tensor>& storages, const std::string& where)
      : storages_(storages), where_(where) {}

  PtValue convert(const pickle::Value& v, int depth) {
    using pickle::Kind;
    switch (v.kind) {
      case Kind::None:
        return PtValue();
      case Kind::Bool:
        return PtValue::boolean(v.i != 0);
      case Kind::Int:
        return PtValue::integer(v.i);
      case Kind::Float:
        return PtValue::real(v.f);
      case Kind::Dtype:
        return PtValue::dtype(ScalarType(v.i));
      default:
        break;
    }
    EMBER_CHECK(depth < kMaxDepth, "[load_pt] ", where_, ": containers nest deeper than ",
                kMaxDepth, " levels");
    const pickle::Object* o = v.obj;
    if (auto it = done_.find(o); it != done_.end()) return it->second;
    EMBER_CHECK(active_.insert(o).second, "[load_pt] ", where_,
                ": the data holds a reference cycle, which a PtValue tree cannot represent");
    PtValue out = make(*o, depth);
    active_.erase(o);
    done_.emplace(o, out);
    return out;
  }

 private:
  PtValue make(const pickle::Object& o, int depth) {
    using pickle::Kind;
    switch (o.kind) {
      case Kind::BigInt:
        return PtValue::big_integer(o.str);
      case Kind::Str:
        return PtValue::string(o.str);
      case Kind::Bytes:
        return PtValue::bytes(o.str);
      case Kind::List:
      case Kind::Tuple:
      case Kind::Set: {
        PtValue::Items items;
        items.reserve(o.items.size());
        for (const auto& x : o.items) items.push_back(convert(x, depth + 1));
        auto k = o.kind == Kind::List    ? PtValue::Kind::List
                 : o.kind == Kind::Tuple ? PtValue::Kind::Tuple
                                         : PtValue::Kind::Set;
        return PtValue::sequence(k, std::move(items), o.ordered);
      }
      case Kind::Dict: {
        PtValue::Pairs pairs;
        pairs.reserve(o.items.size() / 2);
        for (size_t k = 0; k + 1 < o.items.size(); k += 2)
          pairs.emplace_back(convert(o.items[k], depth + 1), convert(o.items[k + 1], depth + 1));
        return PtValue::dict(std::move(pairs), o.ordered);
      }
      case Kind::Storage:
        return PtValue::tensor(storages_[o.storage->index]);
      case Kind::Tensor:
        return PtValue::tensor(
            make_tensor(*o.tensor, storages_[o.tensor->storage->storage->index].storage(), where_),
            o.tensor->parameter);
      case Kind::Global:
        EMBER_THROW(Error, "[load_pt] ", where_, ": the data holds the bare global '", o.str,
                    "', which has no ember value");
      default:
        break;
    }
    EMBER_THROW(InternalError, "[load_pt] unexpected object kind");
  }

  const std::vector<Tensor>& storages_;
  const std::string& where_;
  std::unordered_map<const pickle::Object*, PtValue> done_;
  std::unordered_set<const pickle::Object*> active_;
};

PtValue load_from(std::shared_ptr<const zip::Source> src, Device device, const std::string& where) {
  uint8_t head[16] = {};
  size_t n = size_t(std::min<uint64_t>(src->size(), sizeof head));
  src->read(0, head, n);
  if (!zip::has_zip_magic(head, n)) throw_not_a_checkpoint(head, n, where, "load_pt");
  Archive archive(std::move(src), where);
  pickle::Result r = archive.unpickle_weights_only();
  std::vector<Tensor> storages;
  storages.reserve(r.storages.size());
  for (const pickle::Object* s : r.storages) {
    Tensor t = read_storage_tensor(archive, *s->storage);
    storages.push_back(device.is_cpu() ? t : t.to(device));
  }
  return Converter(storages, where).convert(r.root, 0);
}

}  // namespace
}  // namespace pt

// ---- PtValue ----

PtValue PtValue::boolean(bool b) {
  PtValue v;
  v.kind_ = Kind::Bool;
  v.i_ = b;
  return v;
}
PtValue PtValue::integer(int64_t i) {
  PtValue v;
  v.kind_ = Kind::Int;
  v.i_ = i;
  return v;
}
PtValue PtValue::big_integer(std::string bytes) {
  PtValue v;
  v.kind_ = Kind::BigInt;
  v.s_ = std::make_shared<const std::string>(std::move(bytes));
  return v;
}
PtValue PtValue::real(double d) {
  PtValue v;
  v.kind_ = Kind::Double;
  v.d_ = d;
  return v;
}
PtValue PtValue::string(std::string s) {
  PtValue v;
  v.kind_ = Kind::String;
  v.s_ = std::make_shared<const std::string>(std::move(s));
  return v;
}
PtValue PtValue::bytes(std::string b) {
  PtValue v = string(std::move(b));
  v.kind_ = Kind::Bytes;
  return v;
}
PtValue PtValue::dtype(ScalarType t) {
  PtValue v;
  v.kind_ = Kind::Dtype;
  v.dtype_ = t;
  return v;
}
PtValue PtValue::tensor(Tensor t, bool parameter) {
  PtValue v;
  v.kind_ = Kind::Tensor;
  v.t_ = std::move(t);
  v.flag_ = parameter;
  return v;
}
PtValue PtValue::sequence(Kind kind, Items items, bool flag) {
  EMBER_CHECK_VALUE(kind == Kind::List || kind == Kind::Tuple || kind == Kind::Set,
                    "[PtValue] sequence() takes List, Tuple or Set");
  PtValue v;
  v.kind_ = kind;
  v.flag_ = flag;
  v.items_ = std::make_shared<const Items>(std::move(items));
  return v;
}
PtValue PtValue::dict(Pairs pairs, bool ordered) {
  PtValue v;
  v.kind_ = Kind::Dict;
  v.flag_ = ordered;
  v.pairs_ = std::make_shared<const Pairs>(std::move(pairs));
  return v;
}

const char* PtValue::kind_name() const {
  switch (kind_) {
    case Kind::None:
      return "None";
    case Kind::Bool:
      return "bool";
    case Kind::Int:
    case Kind::BigInt:
      return "int";
    case Kind::Double:
      return "float";
    case Kind::String:
      return "str";
    case Kind::Bytes:
      return "bytes";
    case Kind::Dtype:
      return "dtype";
    case Kind::Tensor:
      return "tensor";
    case Kind::List:
      return "list";
    case Kind::Tuple:
      return "tuple";
    case Kind::Dict:
      return "dict";
    case Kind::Set:
      return "set";
  }
  return "?";
}

#define EMBER_PT_EXPECT(cond, want) \
  EMBER_CHECK_TYPE(cond, "[PtValue] expected ", want, ", but the value is a ", kind_name())

bool PtValue::to_bool() const {
  EMBER_PT_EXPECT(kind_ == Kind::Bool, "a bool");
  return i_ != 0;
}
int64_t PtValue::to_int() const {
  EMBER_PT_EXPECT(kind_ == Kind::Int || kind_ == Kind::Bool, "an int");
  return i_;
}
double PtValue::to_double() const {
  EMBER_PT_EXPECT(kind_ == Kind::Double || kind_ == Kind::Int, "a float");
  return kind_ == Kind::Double ? d_ : double(i_);
}
const std::string& PtValue::to_string() const {
  EMBER_PT_EXPECT(kind_ == Kind::String || kind_ == Kind::Bytes || kind_ == Kind::BigInt,
                  "a string");
  return *s_;
}
ScalarType PtValue::to_dtype() const {
  EMBER_PT_EXPECT(kind_ == Kind::Dtype, "a dtype");
  return dtype_;
}
const Tensor& PtValue::to_tensor() const {
  EMBER_PT_EXPECT(kind_ == Kind::Tensor, "a tensor");
  return t_;
}
const PtValue::Items& PtValue::items() const {
  EMBER_PT_EXPECT(kind_ == Kind::List || kind_ == Kind::Tuple || kind_ == Kind::Set,
                  "a list, tuple or set");
  return *items_;
}
const PtValue::Pairs& PtValue::pairs() const {
  EMBER_PT_EXPECT(kind_ == Kind::Dict, "a dict");
  return *pairs_;
}
const PtValue* PtValue::find(const std::string& key) const {
  for (const auto& [k, v] : pairs())
    if (k.kind() == Kind::String && k.to_string() == key) return &v;
  return nullptr;
}

// ---- loading ----

PtValue load_pt_value(const std::string& path, Device device) {
  return pt::load_from(std::make_shared<zip::FileSource>(path, "load_pt"), device, path);
}

PtValue load_pt_value(const void* data, size_t size, Device device, const std::string& where) {
  return pt::load_from(std::make_shared<zip::MemorySource>(data, size), device, where);
}

OrderedDict<std::string, Tensor> load_pt(const std::string& path, Device device) {
  return flatten_pt(load_pt_value(path, device));
}

namespace {

void flatten_into(const PtValue& v, const std::string& key, OrderedDict<std::string, Tensor>& out,
                  std::unordered_set<const void*>& seen) {
  auto join = [&](const std::string& k) { return key.empty() ? k : key + "." + k; };
  switch (v.kind()) {
    case PtValue::Kind::Tensor:
      EMBER_CHECK(!out.contains(key), "[flatten_pt] two entries flatten to the key '", key, "'");
      out.insert(key, v.to_tensor());
      return;
    case PtValue::Kind::Dict:
      EMBER_CHECK(seen.insert(&v.pairs()).second, "[flatten_pt] the dict at '", key,
                  "' is reached twice; flattening needs a tree");
      for (const auto& [k, x] : v.pairs()) {
        std::string name;
        if (k.kind() == PtValue::Kind::String)
          name = k.to_string();
        else if (k.kind() == PtValue::Kind::Int)
          name = std::to_string(k.to_int());
        else
          EMBER_THROW(TypeError, "[flatten_pt] a dict key under '", key, "' is a ", k.kind_name(),
                      "; only str and int keys flatten");
        flatten_into(x, join(name), out, seen);
      }
      return;
    case PtValue::Kind::List:
    case PtValue::Kind::Tuple:
      EMBER_CHECK(seen.insert(&v.items()).second, "[flatten_pt] the ", v.kind_name(), " at '", key,
                  "' is reached twice; flattening needs a tree");
      for (size_t i = 0; i < v.items().size(); ++i)
        flatten_into(v.items()[i], join(std::to_string(i)), out, seen);
      return;
    default:
      return;  // numbers, strings, None, sets: not tensors
  }
}

}  // namespace

OrderedDict<std::string, Tensor> flatten_pt(const PtValue& v, const std::string& prefix) {
  OrderedDict<std::string, Tensor> out;
  std::unordered_set<const void*> seen;
  if (v.is_tensor() && prefix.empty()) {
    out.insert("0", v.to_tensor());
    return out;
  }
  flatten_into(v, prefix, out, seen);
  return out;
}

}  // namespace ember
