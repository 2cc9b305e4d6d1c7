// The restricted unpickler (Note [Restricted unpickling]). Opcode semantics follow CPython's
// Lib/pickle.py; only the interpretation of globals differs: a small fixed table instead of
// imports.
#include "serialize/pickle_reader.h"

#include <charconv>
#include <cstring>
#include <unordered_map>

#include "ember/error.h"

namespace ember::pickle {
namespace {

struct DtypeName {
  const char* name;
  ScalarType type;
};
// Every name torch gives a dtype global (torch.float32, torch.float, ...).
constexpr DtypeName kDtypeNames[] = {
    {"bool", ScalarType::Bool},
    {"uint8", ScalarType::Byte},
    {"int8", ScalarType::Char},
    {"int16", ScalarType::Short},
    {"short", ScalarType::Short},
    {"int32", ScalarType::Int},
    {"int", ScalarType::Int},
    {"int64", ScalarType::Long},
    {"long", ScalarType::Long},
    {"float16", ScalarType::Half},
    {"half", ScalarType::Half},
    {"bfloat16", ScalarType::BFloat16},
    {"float32", ScalarType::Float},
    {"float", ScalarType::Float},
    {"float64", ScalarType::Double},
    {"double", ScalarType::Double},
    {"complex32", ScalarType::ComplexHalf},
    {"chalf", ScalarType::ComplexHalf},
    {"complex64", ScalarType::ComplexFloat},
    {"cfloat", ScalarType::ComplexFloat},
    {"complex128", ScalarType::ComplexDouble},
    {"cdouble", ScalarType::ComplexDouble},
};

// Storage classes by name (torch.FloatStorage, torch.cuda.FloatStorage, ...).
constexpr DtypeName kStorageNames[] = {
    {"BoolStorage", ScalarType::Bool},
    {"ByteStorage", ScalarType::Byte},
    {"CharStorage", ScalarType::Char},
    {"ShortStorage", ScalarType::Short},
    {"IntStorage", ScalarType::Int},
    {"LongStorage", ScalarType::Long},
    {"HalfStorage", ScalarType::Half},
    {"BFloat16Storage", ScalarType::BFloat16},
    {"FloatStorage", ScalarType::Float},
    {"DoubleStorage", ScalarType::Double},
    {"ComplexHalfStorage", ScalarType::ComplexHalf},
    {"ComplexFloatStorage", ScalarType::ComplexFloat},
    {"ComplexDoubleStorage", ScalarType::ComplexDouble},
    {"UntypedStorage", ScalarType::Byte},
    {"_UntypedStorage", ScalarType::Byte},
};

struct CallableName {
  const char* name;
  Callable callable;
};
constexpr CallableName kCallables[] = {
    {"collections.OrderedDict", Callable::OrderedDict},
    {"torch._utils._rebuild_tensor", Callable::RebuildTensor},
    {"torch._utils._rebuild_tensor_v2", Callable::RebuildTensorV2},
    {"torch._utils._rebuild_parameter", Callable::RebuildParameter},
    {"torch._utils._rebuild_parameter_with_state", Callable::RebuildParameterWithState},
    {"torch._tensor._rebuild_from_type_v2", Callable::RebuildFromTypeV2},
    {"torch.nn.parameter.Parameter", Callable::ParameterClass},
    {"torch.Tensor", Callable::TensorClass},
    {"torch._tensor.Tensor", Callable::TensorClass},
    {"torch.Size", Callable::Size},
    {"builtins.set", Callable::Set},
    {"builtins.frozenset", Callable::FrozenSet},
    {"builtins.bytes", Callable::Bytes},
    {"_codecs.encode", Callable::CodecsEncode},
};

size_t itemsize(ScalarType t) { return elementSize(t); }

// UTF-8 as Python's pickle writes it ('surrogatepass': lone surrogates are allowed).
bool valid_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const uint8_t*>(s.data());
  const uint8_t* end = p + s.size();
  while (p < end) {
    uint8_t c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
    int n = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : -1;
    if (n < 0 || c > 0xf4 || end - p <= n) return false;
    uint32_t cp = c & (0x3f >> n);
    for (int k = 1; k <= n; ++k) {
      if ((p[k] & 0xc0) != 0x80) return false;
      cp = cp << 6 | (p[k] & 0x3f);
    }
    if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
        cp > 0x10ffff)
      return false;
    p += n + 1;
  }
  return true;
}

class Unpickler {
 public:
  Unpickler(std::string_view data, const std::string& where, const char* op)
      : data_(data), where_(where), op_(op) {}

  Result run() {
    while (true) {
      if (pos_ >= data_.size()) fail("the pickle ends before its STOP opcode");
      op_pos_ = pos_;
      uint8_t code = uint8_t(data_[pos_++]);
      if (code == '.') break;
      step(code);
    }
    if (stack_.empty()) fail("STOP with an empty stack");
    result_.root = stack_.back();
    return std::move(result_);
  }

 private:
  template <class... Parts>
  [[noreturn]] void fail(const Parts&... parts) const {
    EMBER_THROW(Error, "[", op_, "] ", where_, ": invalid pickle: ", parts..., " (opcode at byte ",
                op_pos_, ")");
  }

  // ---- reading ----
  std::string_view take(uint64_t n) {
    if (n > data_.size() - pos_) fail("a length of ", n, " runs past the end of the data");
    std::string_view s = data_.substr(pos_, size_t(n));
    pos_ += size_t(n);
    return s;
  }
  uint64_t le(int n) {
    std::string_view b = take(uint64_t(n));
    uint64_t v = 0;
    for (int k = n - 1; k >= 0; --k) v = v << 8 | uint8_t(b[size_t(k)]);
    return v;
  }
  std::string_view line() {
    size_t nl = data_.find('\n', pos_);
    if (nl == std::string_view::npos) fail("a text argument has no terminating newline");
    std::string_view s = data_.substr(pos_, nl - pos_);
    pos_ = nl + 1;
    return s;
  }
  int64_t decimal(std::string_view s) {
    if (!s.empty() && s.back() == 'L') s.remove_suffix(1);
    if (!s.empty() && s.front() == '+') s.remove_prefix(1);
    int64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size() || s.empty())
      fail("'", std::string(s.substr(0, 40)), "' is not a 64-bit integer");
    return v;
  }

  // ---- stack ----
  Object* make(Kind k) {
    result_.arena.push_back(std::make_unique<Object>(k));
    return result_.arena.back().get();
  }
  Value obj_value(Object* o) { return Value{o->kind, 0, 0, o}; }
  void push(Value v) { stack_.push_back(v); }
  Value pop() {
    if (stack_.size() <= floor()) fail("the stack is empty");
    Value v = stack_.back();
    stack_.pop_back();
    return v;
  }
  Value& top() {
    if (stack_.size() <= floor()) fail("the stack is empty");
    return stack_.back();
  }
  size_t floor() const { return marks_.empty() ? 0 : marks_.back(); }
  std::vector<Value> pop_mark() {
    if (marks_.empty()) fail("no MARK to pop to");
    size_t m = marks_.back();
    marks_.pop_back();
    std::vector<Value> items(stack_.begin() + std::ptrdiff_t(m), stack_.end());
    stack_.resize(m);
    return items;
  }
  Value make_str(std::string_view s) {
    if (!valid_utf8(s)) fail("a string is not valid UTF-8");
    Object* o = make(Kind::Str);
    o->str.assign(s);
    return obj_value(o);
  }
  Value make_bytes(std::string_view s) {
    Object* o = make(Kind::Bytes);
    o->str.assign(s);
    return obj_value(o);
  }
  Value make_seq(Kind k, std::vector<Value> items) {
    Object* o = make(k);
    o->items = std::move(items);
    return obj_value(o);
  }
  Value make_long(std::string_view b) {
    // Two's complement, little-endian; Python writes the shortest form.
    if (b.empty()) return Value{Kind::Int, 0, 0, nullptr};
    bool neg = uint8_t(b.back()) & 0x80;
    size_t n = b.size();
    uint8_t pad = neg ? 0xff : 0x00;
    while (n > 8 && uint8_t(b[n - 1]) == pad) --n;  // redundant sign bytes
    bool fits = n < 8 || (n == 8 && bool(uint8_t(b[7]) & 0x80) == neg);
    if (n > 8 || !fits) {
      Object* o = make(Kind::BigInt);
      o->str.assign(b);
      return obj_value(o);
    }
    uint64_t v = neg ? ~uint64_t(0) : 0;
    for (size_t k = n; k-- > 0;) v = v << 8 | uint8_t(b[k]);
    if (n < 8 && neg) v |= ~uint64_t(0) << (8 * n);
    return Value{Kind::Int, int64_t(v), 0, nullptr};
  }

  // ---- memo ----
  void put(uint64_t idx) { memo_[idx] = top(); }
  void get(uint64_t idx) {
    auto it = memo_.find(idx);
    if (it == memo_.end()) fail("memo key ", idx, " was never stored");
    push(it->second);
  }

  // ---- globals ----
  Value global(std::string_view module, std::string_view name) {
    std::string mod(module);
    if (mod == "__builtin__") mod = "builtins";
    if (mod == "torch.tensor") mod = "torch._tensor";  // torch's own module rename
    std::string full = mod + "." + std::string(name);
    if (mod == "torch") {
      for (const auto& d : kDtypeNames)
        if (name == d.name) return Value{Kind::Dtype, int64_t(d.type), 0, nullptr};
    }
    if ((mod == "torch" || mod.rfind("torch.", 0) == 0) && name.size() > 7 &&
        name.substr(name.size() - 7) == "Storage") {
      for (const auto& d : kStorageNames) {
        if (name == d.name) {
          Object* o = make(Kind::Global);
          o->callable = Callable::StorageType;
          o->dtype = d.type;
          o->str = full;
          return obj_value(o);
        }
      }
      EMBER_THROW(NotImplementedError, "[", op_, "] ", where_, ": the storage type '", full,
                  "' (quantized or legacy) is not supported");
    }
    for (const auto& c : kCallables) {
      if (full == c.name) {
        Object* o = make(Kind::Global);
        o->callable = c.callable;
        o->str = full;
        return obj_value(o);
      }
    }
    EMBER_THROW(Error, "[", op_, "] refusing to load global '", full, "' from ", where_,
                " (weights_only loading allows only tensors, containers and numbers)");
  }

  // ---- argument helpers ----
  const char* kind_name(const Value& v) const {
    switch (v.kind) {
      case Kind::None:
        return "None";
      case Kind::Bool:
        return "bool";
      case Kind::Int:
      case Kind::BigInt:
        return "int";
      case Kind::Float:
        return "float";
      case Kind::Dtype:
        return "dtype";
      case Kind::Str:
        return "str";
      case Kind::Bytes:
        return "bytes";
      case Kind::List:
        return "list";
      case Kind::Tuple:
        return "tuple";
      case Kind::Dict:
        return "dict";
      case Kind::Set:
        return "set";
      case Kind::Global:
        return "global";
      case Kind::Storage:
        return "storage";
      case Kind::Tensor:
        return "tensor";
    }
    return "?";
  }
  int64_t as_int(const Value& v, const char* what) {
    if (v.kind != Kind::Int && v.kind != Kind::Bool)
      fail(what, " must be an int, not ", kind_name(v));
    return v.i;
  }
  std::vector<int64_t> as_ints(const Value& v, const char* what) {
    if (v.kind != Kind::Tuple && v.kind != Kind::List)
      fail(what, " must be a tuple of ints, not ", kind_name(v));
    std::vector<int64_t> out;
    out.reserve(v.obj->items.size());
    for (const Value& x : v.obj->items) out.push_back(as_int(x, what));
    return out;
  }
  std::string_view as_text(const Value& v, const char* what) {
    if (v.kind != Kind::Str && v.kind != Kind::Bytes)
      fail(what, " must be a string, not ", kind_name(v));
    return v.obj->str;
  }
  Object* as_tensor(const Value& v, const char* what) {
    if (v.kind != Kind::Tensor) fail(what, " must be a tensor, not ", kind_name(v));
    return v.obj;
  }
  void check_args(const std::vector<Value>& a, size_t lo, size_t hi, const Object* fn) {
    if (a.size() < lo || a.size() > hi)
      fail(fn->str, " takes ", lo, "..", hi, " arguments, got ", a.size());
  }

  // ---- tensors ----
  Value rebuild_tensor(const std::vector<Value>& a, const Object* fn) {
    if (a[0].kind != Kind::Storage) fail(fn->str, ": the storage argument is a ", kind_name(a[0]));
    const StorageInfo& st = *a[0].obj->storage;
    auto t = std::make_unique<TensorInfo>();
    t->storage = a[0].obj;
    t->offset = as_int(a[1], "storage_offset");
    t->sizes = as_ints(a[2], "size");
    t->strides = as_ints(a[3], "stride");
    if (t->sizes.size() != t->strides.size())
      fail("a tensor has ", t->sizes.size(), " sizes but ", t->strides.size(), " strides");
    if (t->offset < 0) fail("a tensor has the negative storage offset ", t->offset);
    // Every reachable element must lie inside the storage (Note [Tensor invariants]).
    int64_t last = t->offset, numel = 1;
    for (size_t d = 0; d < t->sizes.size(); ++d) {
      int64_t s = t->sizes[d], st_d = t->strides[d];
      if (s < 0 || st_d < 0) fail("a tensor has a negative size or stride");
      if (s == 0) numel = 0;
    }
    if (numel != 0) {
      for (size_t d = 0; d < t->sizes.size(); ++d) {
        int64_t step = 0;
        if (__builtin_mul_overflow(t->sizes[d] - 1, t->strides[d], &step) ||
            __builtin_add_overflow(last, step, &last))
          fail("a tensor's extent overflows 64 bits");
      }
      if (last >= st.numel)
        fail("a tensor (offset ", t->offset, ") reaches element ", last, " of storage '", st.key,
             "', which holds ", st.numel);
    } else if (t->offset > st.numel) {
      fail("an empty tensor's offset ", t->offset, " lies past storage '", st.key, "' (", st.numel,
           " elements)");
    }
    if (a.size() > 4) t->requires_grad = as_int(a[4], "requires_grad") != 0;
    Object* o = make(Kind::Tensor);
    o->tensor = std::move(t);
    return obj_value(o);
  }
  Value as_parameter(const Value& data, bool requires_grad) {
    Object* src = as_tensor(data, "a Parameter's data");
    Object* o = make(Kind::Tensor);
    o->tensor = std::make_unique<TensorInfo>(*src->tensor);
    o->tensor->parameter = true;
    o->tensor->requires_grad = requires_grad;
    return obj_value(o);
  }

  Value call(const Value& fnv, std::vector<Value> a) {
    if (fnv.kind != Kind::Global) fail("REDUCE or NEWOBJ on a ", kind_name(fnv), ", not a class");
    const Object* fn = fnv.obj;
    switch (fn->callable) {
      case Callable::OrderedDict: {
        check_args(a, 0, 1, fn);
        Object* d = make(Kind::Dict);
        d->ordered = true;
        if (a.size() == 1) {
          if (a[0].kind != Kind::List && a[0].kind != Kind::Tuple)
            fail("OrderedDict takes a list of pairs, not ", kind_name(a[0]));
          for (const Value& p : a[0].obj->items) {
            if (p.kind != Kind::Tuple || p.obj->items.size() != 2)
              fail("OrderedDict takes a list of (key, value) pairs");
            d->items.push_back(p.obj->items[0]);
            d->items.push_back(p.obj->items[1]);
          }
        }
        return obj_value(d);
      }
      case Callable::RebuildTensor:
        check_args(a, 4, 4, fn);
        return rebuild_tensor(a, fn);
      case Callable::RebuildTensorV2:
        check_args(a, 6, 7, fn);
        return rebuild_tensor(a, fn);
      case Callable::RebuildParameter:
        check_args(a, 3, 3, fn);
        return as_parameter(a[0], as_int(a[1], "requires_grad") != 0);
      case Callable::RebuildParameterWithState:
        check_args(a, 4, 4, fn);
        return as_parameter(a[0], as_int(a[1], "requires_grad") != 0);
      case Callable::ParameterClass:
        check_args(a, 1, 2, fn);
        return as_parameter(a[0], a.size() < 2 || as_int(a[1], "requires_grad") != 0);
      case Callable::RebuildFromTypeV2: {
        check_args(a, 4, 4, fn);
        if (a[1].kind != Kind::Global || (a[1].obj->callable != Callable::TensorClass &&
                                          a[1].obj->callable != Callable::ParameterClass))
          fail("_rebuild_from_type_v2 rebuilds only torch.Tensor and torch.nn.Parameter");
        if (a[2].kind != Kind::Tuple) fail("_rebuild_from_type_v2 takes a tuple of arguments");
        if (a[0].kind != Kind::Global || (a[0].obj->callable != Callable::RebuildTensor &&
                                          a[0].obj->callable != Callable::RebuildTensorV2 &&
                                          a[0].obj->callable != Callable::RebuildParameter))
          fail("_rebuild_from_type_v2 with an unsupported rebuild function");
        Value t = call(a[0], a[2].obj->items);
        if (a[1].obj->callable == Callable::ParameterClass && !t.obj->tensor->parameter)
          t = as_parameter(t, t.obj->tensor->requires_grad);
        return t;
      }
      case Callable::TensorClass:
        fail("torch.Tensor cannot be instantiated here");
      case Callable::Size: {
        check_args(a, 0, 1, fn);
        std::vector<Value> dims;
        if (a.size() == 1)
          for (int64_t d : as_ints(a[0], "torch.Size"))
            dims.push_back(Value{Kind::Int, d, 0, nullptr});
        Value v = make_seq(Kind::Tuple, std::move(dims));
        v.obj->ordered = true;
        return v;
      }
      case Callable::StorageType:
        fail("storage types can only appear in storage records");
      case Callable::Set:
      case Callable::FrozenSet: {
        check_args(a, 0, 1, fn);
        std::vector<Value> items;
        if (a.size() == 1) {
          if (a[0].kind != Kind::List && a[0].kind != Kind::Tuple && a[0].kind != Kind::Set)
            fail("set() takes a list, not ", kind_name(a[0]));
          items = a[0].obj->items;
        }
        Value v = make_seq(Kind::Set, std::move(items));
        v.obj->ordered = fn->callable == Callable::FrozenSet;
        return v;
      }
      case Callable::Bytes:
        check_args(a, 0, 0, fn);
        return make_bytes("");
      case Callable::CodecsEncode: {
        check_args(a, 2, 2, fn);
        if (a[0].kind != Kind::Str || a[1].kind != Kind::Str ||
            (a[1].obj->str != "latin1" && a[1].obj->str != "latin-1"))
          fail("_codecs.encode is allowed only as encode(str, 'latin1')");
        // UTF-8 code points below 256 to single bytes (the string was validated as UTF-8).
        const std::string& s = a[0].obj->str;
        std::string out;
        out.reserve(s.size());
        for (size_t k = 0; k < s.size();) {
          auto c = uint8_t(s[k]);
          if (c < 0x80) {
            out.push_back(char(c));
            ++k;
          } else if ((c & 0xe0) == 0xc0 && c <= 0xc3) {
            out.push_back(char((c & 0x1f) << 6 | (uint8_t(s[k + 1]) & 0x3f)));
            k += 2;
          } else {
            fail("_codecs.encode: a character does not fit latin-1");
          }
        }
        return make_bytes(out);
      }
    }
    fail("unknown callable");
  }

  void persistent_load(const Value& pid) {
    if (pid.kind != Kind::Tuple || pid.obj->items.size() != 5)
      fail("a persistent id must be ('storage', type, key, location, numel)");
    const auto& it = pid.obj->items;
    if (as_text(it[0], "the persistent id's tag") != "storage")
      fail("unknown persistent id tag '", std::string(as_text(it[0], "tag").substr(0, 40)), "'");
    if (it[1].kind != Kind::Global || it[1].obj->callable != Callable::StorageType)
      fail("a storage record names no storage type");
    ScalarType dt = it[1].obj->dtype;
    std::string key(as_text(it[2], "the storage key"));
    std::string location(as_text(it[3], "the storage location"));
    int64_t numel = as_int(it[4], "the storage size");
    if (key.empty() || key.size() > 1024) fail("a storage key is empty or too long");
    if (numel < 0 || uint64_t(numel) > (uint64_t(1) << 62) / itemsize(dt))
      fail("storage '", key, "' has the impossible size ", numel);
    auto found = storages_.find(key);
    if (found != storages_.end()) {
      const StorageInfo& s = *found->second->storage;
      if (s.dtype != dt || s.numel != numel)
        fail("storage '", key, "' is declared twice with different types or sizes");
      push(obj_value(found->second));
      return;
    }
    Object* o = make(Kind::Storage);
    o->storage = std::make_unique<StorageInfo>();
    o->storage->key = key;
    o->storage->location = location;
    o->storage->dtype = dt;
    o->storage->numel = numel;
    o->storage->index = result_.storages.size();
    result_.storages.push_back(o);
    storages_.emplace(key, o);
    push(obj_value(o));
  }

  void build() {
    Value state = pop();
    Value& inst = top();
    bool empty_state =
        state.kind == Kind::None || (state.kind == Kind::Dict && state.obj->items.empty());
    if (inst.kind == Kind::Tensor && empty_state) return;
    if (inst.kind != Kind::Dict || !inst.obj->ordered)
      fail("BUILD is allowed only on an OrderedDict, not on a ", kind_name(inst));
    // (instance dict, slot dict) or an instance dict.
    if (state.kind == Kind::Tuple && state.obj->items.size() == 2) {
      Value slots = state.obj->items[1];
      if (slots.kind != Kind::None && !(slots.kind == Kind::Dict && slots.obj->items.empty()))
        fail("an OrderedDict cannot take slot state");
      state = state.obj->items[0];
    }
    if (state.kind == Kind::None) return;
    if (state.kind != Kind::Dict) fail("an OrderedDict's state must be a dict");
    const auto& kv = state.obj->items;
    for (size_t k = 0; k + 1 < kv.size(); k += 2) {
      if (kv[k].kind != Kind::Str) fail("an attribute name must be a str");
      inst.obj->attrs.push_back(kv[k]);
      inst.obj->attrs.push_back(kv[k + 1]);
    }
  }

  void add_to(Value target, const std::vector<Value>& items, Kind want, const char* op) {
    if (target.kind != want) fail(op, " on a ", kind_name(target));
    target.obj->items.insert(target.obj->items.end(), items.begin(), items.end());
  }

  void step(uint8_t code) {
    switch (code) {
      case 0x80: {  // PROTO
        uint64_t p = le(1);
        if (p > 5) fail("unsupported pickle protocol ", p);
        return;
      }
      case 0x95:  // FRAME: a buffering hint; the data is all in memory.
        if (le(8) > data_.size() - pos_) fail("a frame runs past the end of the data");
        return;
      case '(':  // MARK
        marks_.push_back(stack_.size());
        return;
      case '0':  // POP
        if (stack_.size() > floor())
          stack_.pop_back();
        else
          pop_mark();
        return;
      case '1':  // POP_MARK
        pop_mark();
        return;
      case '2':  // DUP
        push(top());
        return;
      case 'N':
        push(Value{});
        return;
      case 0x88:
      case 0x89:
        push(Value{Kind::Bool, code == 0x88, 0, nullptr});
        return;
      case 'J':  // BININT
        push(Value{Kind::Int, int64_t(int32_t(uint32_t(le(4)))), 0, nullptr});
        return;
      case 'K':  // BININT1
        push(Value{Kind::Int, int64_t(le(1)), 0, nullptr});
        return;
      case 'M':  // BININT2
        push(Value{Kind::Int, int64_t(le(2)), 0, nullptr});
        return;
      case 'I': {  // INT (text); 00 and 01 are protocol 0's False and True
        std::string_view s = line();
        if (s == "00" || s == "01")
          push(Value{Kind::Bool, s == "01", 0, nullptr});
        else
          push(Value{Kind::Int, decimal(s), 0, nullptr});
        return;
      }
      case 'L':  // LONG (text)
        push(Value{Kind::Int, decimal(line()), 0, nullptr});
        return;
      case 0x8a:  // LONG1
        push(make_long(take(le(1))));
        return;
      case 0x8b: {  // LONG4
        auto n = int32_t(uint32_t(le(4)));
        if (n < 0) fail("LONG4 with a negative length");
        push(make_long(take(uint64_t(n))));
        return;
      }
      case 'G': {  // BINFLOAT: big-endian IEEE double
        std::string_view b = take(8);
        uint64_t bits = 0;
        for (char c : b) bits = bits << 8 | uint8_t(c);
        double d;
        std::memcpy(&d, &bits, 8);
        push(Value{Kind::Float, 0, d, nullptr});
        return;
      }
      case 'F': {  // FLOAT (text)
        std::string_view s = line();
        double d = 0;
        auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
        if (ec != std::errc() || p != s.data() + s.size()) fail("a FLOAT is not a number");
        push(Value{Kind::Float, 0, d, nullptr});
        return;
      }
      case 'X':  // BINUNICODE
        push(make_str(take(le(4))));
        return;
      case 0x8c:  // SHORT_BINUNICODE
        push(make_str(take(le(1))));
        return;
      case 0x8d:  // BINUNICODE8
        push(make_str(take(le(8))));
        return;
      case 'T':  // BINSTRING: Python 2 str, decoded as torch.load does (UTF-8)
        push(make_str(take(le(4))));
        return;
      case 'U':  // SHORT_BINSTRING
        push(make_str(take(le(1))));
        return;
      case 'B':  // BINBYTES
        push(make_bytes(take(le(4))));
        return;
      case 'C':  // SHORT_BINBYTES
        push(make_bytes(take(le(1))));
        return;
      case 0x8e:  // BINBYTES8
      case 0x96:  // BYTEARRAY8
        push(make_bytes(take(le(8))));
        return;
      case ']':  // EMPTY_LIST
        push(make_seq(Kind::List, {}));
        return;
      case 'l':  // LIST
        push(make_seq(Kind::List, pop_mark()));
        return;
      case 'a': {  // APPEND
        Value v = pop();
        add_to(top(), {v}, Kind::List, "APPEND");
        return;
      }
      case 'e': {  // APPENDS
        std::vector<Value> items = pop_mark();
        add_to(top(), items, Kind::List, "APPENDS");
        return;
      }
      case ')':  // EMPTY_TUPLE
        push(make_seq(Kind::Tuple, {}));
        return;
      case 't':  // TUPLE
        push(make_seq(Kind::Tuple, pop_mark()));
        return;
      case 0x85:
      case 0x86:
      case 0x87: {  // TUPLE1..3
        size_t n = size_t(code - 0x84);
        if (stack_.size() < floor() + n) fail("TUPLE", n, " with too few items on the stack");
        std::vector<Value> items(stack_.end() - std::ptrdiff_t(n), stack_.end());
        stack_.resize(stack_.size() - n);
        push(make_seq(Kind::Tuple, std::move(items)));
        return;
      }
      case '}':  // EMPTY_DICT
        push(make_seq(Kind::Dict, {}));
        return;
      case 'd': {  // DICT
        std::vector<Value> items = pop_mark();
        if (items.size() % 2) fail("DICT with an odd number of items");
        push(make_seq(Kind::Dict, std::move(items)));
        return;
      }
      case 's': {  // SETITEM
        Value v = pop();
        Value k = pop();
        add_to(top(), {k, v}, Kind::Dict, "SETITEM");
        return;
      }
      case 'u': {  // SETITEMS
        std::vector<Value> items = pop_mark();
        if (items.size() % 2) fail("SETITEMS with an odd number of items");
        add_to(top(), items, Kind::Dict, "SETITEMS");
        return;
      }
      case 0x8f:  // EMPTY_SET
        push(make_seq(Kind::Set, {}));
        return;
      case 0x90: {  // ADDITEMS
        std::vector<Value> items = pop_mark();
        Value& t = top();
        if (t.kind != Kind::Set || t.obj->ordered) fail("ADDITEMS on a ", kind_name(t));
        add_to(t, items, Kind::Set, "ADDITEMS");
        return;
      }
      case 0x91: {  // FROZENSET
        Value v = make_seq(Kind::Set, pop_mark());
        v.obj->ordered = true;
        push(v);
        return;
      }
      case 'c': {  // GLOBAL
        std::string_view module = line();
        std::string_view name = line();
        push(global(module, name));
        return;
      }
      case 0x93: {  // STACK_GLOBAL
        Value name = pop();
        Value module = pop();
        if (name.kind != Kind::Str || module.kind != Kind::Str)
          fail("STACK_GLOBAL needs two strings");
        push(global(module.obj->str, name.obj->str));
        return;
      }
      case 'R': {  // REDUCE
        Value args = pop();
        if (args.kind != Kind::Tuple) fail("REDUCE arguments must be a tuple");
        Value fn = pop();
        push(call(fn, args.obj->items));
        return;
      }
      case 0x81: {  // NEWOBJ
        Value args = pop();
        if (args.kind != Kind::Tuple) fail("NEWOBJ arguments must be a tuple");
        Value cls = pop();
        push(call(cls, args.obj->items));
        return;
      }
      case 0x92: {  // NEWOBJ_EX
        Value kwargs = pop();
        Value args = pop();
        if (args.kind != Kind::Tuple || kwargs.kind != Kind::Dict || !kwargs.obj->items.empty())
          fail("NEWOBJ_EX with keyword arguments is not supported");
        Value cls = pop();
        push(call(cls, args.obj->items));
        return;
      }
      case 'b':  // BUILD
        build();
        return;
      case 'p':  // PUT (text)
        put(uint64_t(decimal(line())));
        return;
      case 'q':  // BINPUT
        put(le(1));
        return;
      case 'r':  // LONG_BINPUT
        put(le(4));
        return;
      case 0x94:  // MEMOIZE
        put(memo_.size());
        return;
      case 'g':  // GET (text)
        get(uint64_t(decimal(line())));
        return;
      case 'h':  // BINGET
        get(le(1));
        return;
      case 'j':  // LONG_BINGET
        get(le(4));
        return;
      case 'Q':  // BINPERSID
        persistent_load(pop());
        return;
      case 'P':
        fail("text persistent ids (PERSID) are not supported");
      case 'i':
      case 'o':
        fail("the INST and OBJ opcodes build arbitrary classes and are not allowed");
      case 0x82:
      case 0x83:
      case 0x84:
        fail("extension-registry opcodes (EXT1/2/4) are not allowed");
      case 0x97:
      case 0x98:
        fail("out-of-band buffers (protocol 5) are not supported");
      case 'S':
      case 'V':
        fail("protocol 0 text strings (STRING/UNICODE) are not supported");
      default:
        fail("unknown opcode 0x", "0123456789abcdef"[code >> 4], "0123456789abcdef"[code & 15]);
    }
  }

  std::string_view data_;
  const std::string& where_;
  const char* op_;
  size_t pos_ = 0, op_pos_ = 0;
  std::vector<Value> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, Value> memo_;
  std::unordered_map<std::string, Object*> storages_;
  Result result_;
};

}  // namespace

Result unpickle(std::string_view data, const std::string& where, const char* op) {
  return Unpickler(data, where, op).run();
}

const char* dtype_name_py(ScalarType t) {
  for (const auto& d : kDtypeNames)
    if (d.type == t) return d.name;
  return "undefined";
}

}  // namespace ember::pickle
