// The elementwise op families (from op_list.h, so every op in the table is bound) with their
// function, method, in-place, out= and operator forms, plus the ops with extra parameters.
#include <cstddef>
#include <cstring>

#include "ops/elementwise/elementwise_core.h"
#include "pyember.h"

namespace ember::python {

Tensor tensor_from_numpy_arg(PyObject* o);  // interop.cpp

namespace {

/// One operand of a binary op: a tensor or a number.
struct Operand {
  const Tensor* t = nullptr;
  Scalar s;
  Tensor holder;  // keeps a converted NumPy array alive
  int64_t numel() const { return t ? t->numel() : 1; }
};

/// Converts `o`; false (no error set) when it is neither a tensor, a number nor an ndarray.
bool resolve(PyObject* o, Operand& r) {
  TensorOrScalar ts;
  if (to_tensor_or_scalar(o, ts)) {
    r.t = ts.tensor;
    r.s = ts.scalar;
    return true;
  }
  if (std::strcmp(Py_TYPE(o)->tp_name, "numpy.ndarray") == 0) {
    r.holder = tensor_from_numpy_arg(o);
    r.t = &r.holder;
    return true;
  }
  return false;
}

/// Keyword parameters beyond (input, other).
enum class Extra : uint8_t { None, Alpha, Rounding };

struct ExtraArgs {
  Scalar alpha = Scalar(int64_t(1));
  std::optional<std::string> rounding;
};

using BinFn = Tensor (*)(const Operand&, const Operand&, const ExtraArgs&);
using BinOutFn = void (*)(Tensor&, const Operand&, const Operand&, const ExtraArgs&);
using BinInFn = void (*)(Tensor&, const Operand&, const ExtraArgs&);

struct BinaryOp {
  const char* name;
  const char* other_name;
  Extra extra;
  BinFn fn;
  BinOutFn out;
  BinInFn inplace;
};

[[noreturn]] void two_scalars(const char* name) {
  type_error(detail::str_cat(name, "(): at least one of the arguments must be a Tensor"));
}

std::optional<std::string_view> rounding_view(const ExtraArgs& e) {
  if (!e.rounding) return std::nullopt;
  return std::string_view(*e.rounding);
}

#define EMBER_BIN_IMPL(op)                                                             \
  Tensor op##_fn(const Operand& a, const Operand& b, const ExtraArgs&) {               \
    if (a.t && b.t) return ember::op(*a.t, *b.t);                                      \
    if (a.t) return ember::op(*a.t, b.s);                                              \
    if (b.t) return ember::op(a.s, *b.t);                                              \
    two_scalars(#op);                                                                  \
  }                                                                                    \
  void op##_outfn(Tensor& out, const Operand& a, const Operand& b, const ExtraArgs&) { \
    if (a.t && b.t)                                                                    \
      ember::op##_out(out, *a.t, *b.t);                                                \
    else if (a.t)                                                                      \
      ember::op##_out(out, *a.t, b.s);                                                 \
    else if (b.t)                                                                      \
      ember::op##_out(out, wrap_scalar(a.s), *b.t);                                    \
    else                                                                               \
      two_scalars(#op);                                                                \
  }                                                                                    \
  void op##_infn(Tensor& self, const Operand& b, const ExtraArgs&) {                   \
    if (b.t)                                                                           \
      self.op##_(*b.t);                                                                \
    else                                                                               \
      self.op##_(b.s);                                                                 \
  }
EMBER_BINARY_OPS(EMBER_BIN_IMPL)
EMBER_COMPARISON_OPS(EMBER_BIN_IMPL)
#undef EMBER_BIN_IMPL

// add / sub carry alpha; div carries rounding_mode: the same three forms with one more argument.
#define EMBER_BIN_EXTRA_IMPL(op, EXTRA)                                                        \
  Tensor op##_fn(const Operand& a, const Operand& b, const ExtraArgs& e) {                     \
    if (a.t && b.t) return ember::op(*a.t, *b.t, EXTRA);                                       \
    if (a.t) return ember::op(*a.t, b.s, EXTRA);                                               \
    if (b.t) return ember::op(wrap_scalar(a.s), *b.t, EXTRA);                                  \
    two_scalars(#op);                                                                          \
  }                                                                                            \
  void op##_outfn(Tensor& out, const Operand& a, const Operand& b, const ExtraArgs& e) {       \
    if (!a.t && !b.t) two_scalars(#op);                                                        \
    ember::op##_out(out, a.t ? *a.t : wrap_scalar(a.s), b.t ? *b.t : wrap_scalar(b.s), EXTRA); \
  }                                                                                            \
  void op##_infn(Tensor& self, const Operand& b, const ExtraArgs& e) {                         \
    if (b.t)                                                                                   \
      self.op##_(*b.t, EXTRA);                                                                 \
    else                                                                                       \
      self.op##_(b.s, EXTRA);                                                                  \
  }
EMBER_BIN_EXTRA_IMPL(add, e.alpha)
EMBER_BIN_EXTRA_IMPL(sub, e.alpha)
EMBER_BIN_EXTRA_IMPL(div, rounding_view(e))
#undef EMBER_BIN_EXTRA_IMPL

const BinaryOp kBinaryOps[] = {{"add", "other", Extra::Alpha, add_fn, add_outfn, add_infn},
                               {"sub", "other", Extra::Alpha, sub_fn, sub_outfn, sub_infn},
                               {"div", "other", Extra::Rounding, div_fn, div_outfn, div_infn},
#define EMBER_BIN_ROW(op)                                                                       \
  {#op,                                                                                         \
   std::strcmp(#op, "pow") == 0 || std::strcmp(#op, "float_power") == 0 ? "exponent" : "other", \
   Extra::None,                                                                                 \
   op##_fn,                                                                                     \
   op##_outfn,                                                                                  \
   op##_infn},
                               EMBER_BINARY_OPS(EMBER_BIN_ROW) EMBER_COMPARISON_OPS(EMBER_BIN_ROW)
#undef EMBER_BIN_ROW
};
constexpr int kNumBinary = int(sizeof(kBinaryOps) / sizeof(kBinaryOps[0]));

/// Parameter lists per op, built once: function (input, other, *, extra, out), method.
struct BinaryParams {
  Params fn, method;
};

std::vector<BinaryParams>& binary_params() {
  static std::vector<BinaryParams> v = [] {
    std::vector<BinaryParams> r;
    for (const BinaryOp& op : kBinaryOps) {
      const char* extra = op.extra == Extra::Alpha      ? "alpha"
                          : op.extra == Extra::Rounding ? "rounding_mode"
                                                        : nullptr;
      if (extra) {
        r.push_back({Params(op.name, {"input", op.other_name, "*", extra, "out"}),
                     Params(op.name, {op.other_name, "*", extra})});
      } else {
        r.push_back({Params(op.name, {"input", op.other_name, "*", "out"}),
                     Params(op.name, {op.other_name})});
      }
    }
    return r;
  }();
  return v;
}

void read_extra(const BinaryOp& op, PyObject* o, ExtraArgs& e) {
  if (!o) return;
  if (op.extra == Extra::Alpha) {
    e.alpha = to_scalar(o, op.name, "alpha");
  } else if (op.extra == Extra::Rounding && o != Py_None) {
    e.rounding = to_string(o, op.name, "rounding_mode");
  }
}

[[noreturn]] void bad_operand(const BinaryOp& op, PyObject* o, const char* arg) {
  type_error(detail::str_cat(op.name, "(): argument '", arg, "' must be Tensor or Number, not ",
                             Py_TYPE(o)->tp_name));
}

/// PyTorch takes two numbers (and returns a 0-dim tensor) only for the arithmetic ops below;
/// the first becomes a wrapped number.
void two_numbers(const BinaryOp& op, Operand& x) {
  static const char* const allowed[] = {"add", "sub", "mul", "div", "true_divide", "floor_divide"};
  for (const char* n : allowed) {
    if (std::strcmp(op.name, n) == 0) {
      x.holder = wrap_scalar(x.s);
      x.t = &x.holder;
      return;
    }
  }
  two_scalars(op.name);
}

template <int I>
PyObject* binary_function(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  EMBER_PY_BEGIN
  const BinaryOp& op = kBinaryOps[I];
  PyObject* a[4] = {};
  binary_params()[I].fn.parse(args, nargs, kwnames, a, 2);
  Operand x, y;
  if (!resolve(a[0], x)) bad_operand(op, a[0], "input");
  if (!resolve(a[1], y)) bad_operand(op, a[1], op.other_name);
  if (!x.t && !y.t) two_numbers(op, x);
  ExtraArgs e;
  PyObject* out = op.extra == Extra::None ? a[2] : a[3];
  if (op.extra != Extra::None) read_extra(op, a[2], e);
  const int64_t n = std::max(x.numel(), y.numel());
  if (out && out != Py_None) {
    Tensor& o = const_cast<Tensor&>(to_tensor(out, op.name, "out"));
    maybe_without_gil(n, [&] {
      op.out(o, x, y, e);
      return 0;
    });
    return return_self(out);
  }
  return wrap(maybe_without_gil(n, [&] { return op.fn(x, y, e); }));
  EMBER_PY_END
}

template <int I>
PyObject* binary_method(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                        PyObject* kwnames) {
  EMBER_PY_BEGIN
  const BinaryOp& op = kBinaryOps[I];
  PyObject* a[2] = {};
  binary_params()[I].method.parse(args, nargs, kwnames, a, 1);
  Operand x, y;
  x.t = &unwrap(self);
  if (!resolve(a[0], y)) bad_operand(op, a[0], op.other_name);
  ExtraArgs e;
  read_extra(op, a[1], e);
  return wrap(maybe_without_gil(std::max(x.numel(), y.numel()), [&] { return op.fn(x, y, e); }));
  EMBER_PY_END
}

template <int I>
PyObject* binary_inplace(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                         PyObject* kwnames) {
  EMBER_PY_BEGIN
  const BinaryOp& op = kBinaryOps[I];
  PyObject* a[2] = {};
  binary_params()[I].method.parse(args, nargs, kwnames, a, 1);
  Operand y;
  if (!resolve(a[0], y)) bad_operand(op, a[0], op.other_name);
  ExtraArgs e;
  read_extra(op, a[1], e);
  Tensor& t = unwrap(self);
  maybe_without_gil(t.numel(), [&] {
    op.inplace(t, y, e);
    return 0;
  });
  return return_self(self);
  EMBER_PY_END
}

/// Operators: Python expects NotImplemented for operand types we do not handle. Reflected
/// forms (`2 - t`) put self second.
PyObject* operator_impl(const BinaryOp& op, bool reflected, PyObject* self, PyObject* other) {
  EMBER_PY_BEGIN
  Operand x, y;
  (reflected ? y : x).t = &unwrap(self);
  if (!resolve(other, reflected ? x : y)) Py_RETURN_NOTIMPLEMENTED;
  return wrap(
      maybe_without_gil(std::max(x.numel(), y.numel()), [&] { return op.fn(x, y, ExtraArgs{}); }));
  EMBER_PY_END
}

PyObject* ioperator_impl(const BinaryOp& op, PyObject* self, PyObject* other) {
  EMBER_PY_BEGIN
  Operand y;
  if (!resolve(other, y)) Py_RETURN_NOTIMPLEMENTED;
  Tensor& t = unwrap(self);
  maybe_without_gil(t.numel(), [&] {
    op.inplace(t, y, ExtraArgs{});
    return 0;
  });
  return return_self(self);
  EMBER_PY_END
}

PyObject* one_operand_error() {
  EMBER_PY_BEGIN
  type_error("operator takes exactly one argument");
  EMBER_PY_END
}

template <int I, bool Reflected>
PyObject* dunder(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  if (nargs != 1 || kwnames) return one_operand_error();
  return operator_impl(kBinaryOps[I], Reflected, self, args[0]);
}

template <int I>
PyObject* idunder(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  if (nargs != 1 || kwnames) return one_operand_error();
  return ioperator_impl(kBinaryOps[I], self, args[0]);
}

// Note [Operator slots]
// Defining __add__ on the type leaves CPython's generic slot_nb_add in tp_as_number, which looks
// __add__ (or __radd__) up by name and calls the method on every `a + b`. The Tensor type's
// number slots and tp_richcompare call the operator bodies directly instead, with the semantics
// of CPython's generic slot (SLOT1BINFULL): when the left operand's type holds this slot it is
// the forward operator, otherwise the right operand is the Tensor and it is the reflected one.
// CPython itself tries a subclass's overriding __radd__ first, and assigning an operator on
// the class (or defining one in a subclass) puts the generic slot back, so overrides behave as
// before. The __add__ / __radd__ / __iadd__ methods stay for explicit calls.
struct OperatorSlot {
  const char* op;                   ///< kBinaryOps name
  size_t offset;                    ///< the binaryfunc in PyNumberMethods
  size_t inplace_offset;            ///< the in-place binaryfunc in PyNumberMethods
  int index = -1;                   ///< kBinaryOps row (set at install)
  binaryfunc forward_fn = nullptr;  ///< the installed slot functions
  binaryfunc inplace_fn = nullptr;
};

OperatorSlot g_slots[] = {
    {"add", offsetof(PyNumberMethods, nb_add), offsetof(PyNumberMethods, nb_inplace_add)},
    {"sub", offsetof(PyNumberMethods, nb_subtract), offsetof(PyNumberMethods, nb_inplace_subtract)},
    {"mul", offsetof(PyNumberMethods, nb_multiply), offsetof(PyNumberMethods, nb_inplace_multiply)},
    {"div", offsetof(PyNumberMethods, nb_true_divide),
     offsetof(PyNumberMethods, nb_inplace_true_divide)},
    {"floor_divide", offsetof(PyNumberMethods, nb_floor_divide),
     offsetof(PyNumberMethods, nb_inplace_floor_divide)},
    {"remainder", offsetof(PyNumberMethods, nb_remainder),
     offsetof(PyNumberMethods, nb_inplace_remainder)},
    {"bitwise_and", offsetof(PyNumberMethods, nb_and), offsetof(PyNumberMethods, nb_inplace_and)},
    {"bitwise_or", offsetof(PyNumberMethods, nb_or), offsetof(PyNumberMethods, nb_inplace_or)},
    {"bitwise_xor", offsetof(PyNumberMethods, nb_xor), offsetof(PyNumberMethods, nb_inplace_xor)},
    {"bitwise_left_shift", offsetof(PyNumberMethods, nb_lshift),
     offsetof(PyNumberMethods, nb_inplace_lshift)},
    {"bitwise_right_shift", offsetof(PyNumberMethods, nb_rshift),
     offsetof(PyNumberMethods, nb_inplace_rshift)},
};
constexpr int kNumSlots = int(sizeof(g_slots) / sizeof(g_slots[0]));

binaryfunc& slot_at(PyTypeObject* type, size_t offset) {
  return *reinterpret_cast<binaryfunc*>(reinterpret_cast<char*>(type->tp_as_number) + offset);
}

template <int S>
PyObject* number_slot(PyObject* v, PyObject* w) {
  const OperatorSlot& s = g_slots[S];
  PyNumberMethods* nv = Py_TYPE(v)->tp_as_number;
  const bool forward = nv && *reinterpret_cast<binaryfunc*>(reinterpret_cast<char*>(nv) +
                                                            s.offset) == &number_slot<S>;
  if (forward) return operator_impl(kBinaryOps[s.index], false, v, w);
  return operator_impl(kBinaryOps[s.index], true, w, v);
}

template <int S>
PyObject* inplace_slot(PyObject* v, PyObject* w) {
  return ioperator_impl(kBinaryOps[g_slots[S].index], v, w);
}

int g_compare_index[6];  // by Py_LT .. Py_GE

PyObject* richcompare_slot(PyObject* self, PyObject* other, int op) {
  if (op < Py_LT || op > Py_GE) Py_RETURN_NOTIMPLEMENTED;
  return operator_impl(kBinaryOps[g_compare_index[op]], false, self, other);
}

int find_binary(const char* name) {
  for (int i = 0; i < kNumBinary; ++i) {
    if (std::strcmp(kBinaryOps[i].name, name) == 0) return i;
  }
  EMBER_INTERNAL_ASSERT(false, "no binary op ", name);
}

template <int... I>
void register_binary(py::module_& m, std::integer_sequence<int, I...>) {
  static FastFn fns[] = {binary_function<I>...};
  static FastFn methods[] = {binary_method<I>...};
  static FastFn inplaces[] = {binary_inplace<I>...};
  static FastFn dunders[] = {dunder<I, false>...};
  static FastFn rdunders[] = {dunder<I, true>...};
  static FastFn idunders[] = {idunder<I>...};
  for (int i = 0; i < kNumBinary; ++i) {
    const char* name = kBinaryOps[i].name;
    add_function(m, new_method_def(name, fns[i]));
    add_method(new_method_def(name, methods[i]));
    add_method(new_method_def(strdup((std::string(name) + "_").c_str()), inplaces[i]));
  }
  // Python operator → op; reflected and augmented forms where Python has them.
  struct Dunder {
    const char* op;
    const char* name;
    bool reflected;
    bool augmented;
  };
  const Dunder table[] = {
      {"add", "add", true, true},
      {"sub", "sub", true, true},
      {"mul", "mul", true, true},
      {"div", "truediv", true, true},
      {"floor_divide", "floordiv", true, true},
      {"remainder", "mod", true, true},
      {"pow", "pow", true, true},
      {"bitwise_and", "and", true, true},
      {"bitwise_or", "or", true, true},
      {"bitwise_xor", "xor", true, true},
      {"bitwise_left_shift", "lshift", true, true},
      {"bitwise_right_shift", "rshift", true, true},
      {"eq", "eq", false, false},
      {"ne", "ne", false, false},
      {"lt", "lt", false, false},
      {"le", "le", false, false},
      {"gt", "gt", false, false},
      {"ge", "ge", false, false},
  };
  for (const Dunder& d : table) {
    const int i = find_binary(d.op);
    const std::string base = d.name;
    add_method(new_method_def(strdup(("__" + base + "__").c_str()), dunders[i]));
    if (d.reflected) add_method(new_method_def(strdup(("__r" + base + "__").c_str()), rdunders[i]));
    if (d.augmented) add_method(new_method_def(strdup(("__i" + base + "__").c_str()), idunders[i]));
  }
}

template <int... S>
void install_slots(std::integer_sequence<int, S...>) {
  static binaryfunc forward[] = {number_slot<S>...};
  static binaryfunc inplace[] = {inplace_slot<S>...};
  PyTypeObject* type = tensor_type;
  EMBER_INTERNAL_ASSERT(type->tp_as_number != nullptr);
  for (int i = 0; i < kNumSlots; ++i) {
    g_slots[i].index = find_binary(g_slots[i].op);
    g_slots[i].forward_fn = slot_at(type, g_slots[i].offset) = forward[i];
    g_slots[i].inplace_fn = slot_at(type, g_slots[i].inplace_offset) = inplace[i];
  }
  const char* compare[6] = {"lt", "le", "eq", "ne", "gt", "ge"};  // Py_LT .. Py_GE
  for (int op = Py_LT; op <= Py_GE; ++op) g_compare_index[op] = find_binary(compare[op]);
  type->tp_richcompare = richcompare_slot;
}

}  // namespace

void install_operator_slots() { install_slots(std::make_integer_sequence<int, kNumSlots>{}); }

std::vector<std::string> operator_slots_in_place() {
  std::vector<std::string> out;
  for (const OperatorSlot& s : g_slots) {
    if (s.index < 0) continue;
    if (slot_at(tensor_type, s.offset) == s.forward_fn) out.push_back(s.op);
    if (slot_at(tensor_type, s.inplace_offset) == s.inplace_fn)
      out.push_back(std::string(s.op) + "_");
  }
  if (tensor_type->tp_richcompare == richcompare_slot) out.push_back("compare");
  return out;
}

namespace {

// ---- unary families ----

struct UnaryOp {
  const char* name;
  Tensor (*fn)(const Tensor&);
  Tensor& (*out)(Tensor&, const Tensor&);
  Tensor& (*inplace)(Tensor&);  // nullptr for predicates
};

const UnaryOp kUnaryOps[] = {
#define EMBER_UNARY_ROW(op)                                                   \
  {#op, static_cast<Tensor (*)(const Tensor&)>(&ember::op), &ember::op##_out, \
   static_cast<Tensor& (*)(Tensor&)>(&ember::op##_)},
    EMBER_UNARY_OPS(EMBER_UNARY_ROW)
#undef EMBER_UNARY_ROW
#define EMBER_PRED_ROW(op) \
  {#op, static_cast<Tensor (*)(const Tensor&)>(&ember::op), &ember::op##_out, nullptr},
        EMBER_UNARY_PREDICATE_OPS(EMBER_PRED_ROW)
#undef EMBER_PRED_ROW
};
constexpr int kNumUnary = int(sizeof(kUnaryOps) / sizeof(kUnaryOps[0]));

std::vector<Params>& unary_params() {
  static std::vector<Params> v = [] {
    std::vector<Params> r;
    for (const UnaryOp& op : kUnaryOps)
      r.emplace_back(op.name, std::initializer_list<const char*>{"input", "*", "out"});
    return r;
  }();
  return v;
}

template <int I>
PyObject* unary_function(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  EMBER_PY_BEGIN
  const UnaryOp& op = kUnaryOps[I];
  PyObject* a[2] = {};
  unary_params()[I].parse(args, nargs, kwnames, a, 1);
  const Tensor& x = to_tensor(a[0], op.name, "input");
  if (a[1] && a[1] != Py_None) {
    Tensor& o = const_cast<Tensor&>(to_tensor(a[1], op.name, "out"));
    maybe_without_gil(x.numel(), [&] { return &op.out(o, x); });
    return return_self(a[1]);
  }
  return wrap(maybe_without_gil(x.numel(), [&] { return op.fn(x); }));
  EMBER_PY_END
}

template <int I>
PyObject* unary_method(PyObject* self, PyObject* const*, Py_ssize_t nargs, PyObject* kwnames) {
  EMBER_PY_BEGIN
  if (nargs != 0 || kwnames) {
    type_error(detail::str_cat(kUnaryOps[I].name, "() takes no arguments"));
  }
  const Tensor& x = unwrap(self);
  return wrap(maybe_without_gil(x.numel(), [&] { return kUnaryOps[I].fn(x); }));
  EMBER_PY_END
}

template <int I>
PyObject* unary_inplace(PyObject* self, PyObject* const*, Py_ssize_t nargs, PyObject* kwnames) {
  EMBER_PY_BEGIN
  if (nargs != 0 || kwnames) {
    type_error(detail::str_cat(kUnaryOps[I].name, "_() takes no arguments"));
  }
  Tensor& x = unwrap(self);
  maybe_without_gil(x.numel(), [&] { return &kUnaryOps[I].inplace(x); });
  return return_self(self);
  EMBER_PY_END
}

template <int... I>
void register_unary(py::module_& m, std::integer_sequence<int, I...>) {
  static FastFn fns[] = {unary_function<I>...};
  static FastFn methods[] = {unary_method<I>...};
  static FastFn inplaces[] = {unary_inplace<I>...};
  for (int i = 0; i < kNumUnary; ++i) {
    const char* name = kUnaryOps[i].name;
    add_function(m, new_method_def(name, fns[i]));
    add_method(new_method_def(name, methods[i]));
    if (kUnaryOps[i].inplace) {
      add_method(new_method_def(strdup((std::string(name) + "_").c_str()), inplaces[i]));
    }
  }
}

PyObject* neg_dunder(PyObject* self, PyObject*) {
  EMBER_PY_BEGIN
  return wrap(ember::neg(unwrap(self)));
  EMBER_PY_END
}
PyObject* abs_dunder(PyObject* self, PyObject*) {
  EMBER_PY_BEGIN
  return wrap(ember::abs(unwrap(self)));
  EMBER_PY_END
}
PyObject* invert_dunder(PyObject* self, PyObject*) {
  EMBER_PY_BEGIN
  // PyTorch checks `~` in Python (TypeError); bitwise_not() itself raises RuntimeError.
  EMBER_CHECK_TYPE(isIntegralType(unwrap(self).dtype(), /*include_bool=*/true),
                   "~ (operator.invert) is only implemented on integer and Boolean-type tensors");
  return wrap(ember::bitwise_not(unwrap(self)));
  EMBER_PY_END
}
PyObject* pos_dunder(PyObject* self, PyObject*) {
  EMBER_PY_BEGIN
  EMBER_CHECK(unwrap(self).dtype() != kBool,
              "The `+` operator, on a bool tensor is not supported.");
  return return_self(self);
  EMBER_PY_END
}

// ---- the ops with extra parameters ----

/// Returns the Python `out` object after writing into it, or the new tensor.
/// `fn` and `into` run without the GIL when `x` is big: they must not touch Python objects.
py::object finish(const Tensor& x, py::handle out, const std::function<Tensor()>& fn,
                  const std::function<void(Tensor&)>& into, const char* op) {
  if (!out.is_none()) {
    Tensor& o = const_cast<Tensor&>(to_tensor(out.ptr(), op, "out"));
    maybe_without_gil(x.numel(), [&] {
      into(o);
      return 0;
    });
    return py::reinterpret_borrow<py::object>(out);
  }
  return wrap_obj(maybe_without_gil(x.numel(), fn));
}

/// Runs `f` (no Python objects inside) with the GIL released when `x` is big.
template <class F>
auto nogil(const Tensor& x, F&& f) {
  return maybe_without_gil(x.numel(), std::forward<F>(f));
}

std::optional<Scalar> opt_scalar(py::handle h, const char* fn, const char* arg) {
  if (h.is_none()) return std::nullopt;
  return to_scalar(h.ptr(), fn, arg);
}

py::object clamp_impl(const Tensor& x, py::handle min, py::handle max, py::handle out, bool inplace,
                      py::handle self) {
  EMBER_CHECK(!min.is_none() || !max.is_none(),
              "torch.clamp: At least one of 'min' or 'max' must not be None");
  const bool tensors = is_tensor(min.ptr()) || is_tensor(max.ptr());
  Tensor& xm = const_cast<Tensor&>(x);
  if (tensors) {
    auto opt_t = [](py::handle h) -> std::optional<Tensor> {
      if (h.is_none()) return std::nullopt;
      if (is_tensor(h.ptr())) return unwrap(h.ptr());
      return wrap_scalar(to_scalar(h.ptr(), "clamp", "min"));
    };
    auto lo = opt_t(min), hi = opt_t(max);
    if (inplace) {
      nogil(x, [&] { return &xm.clamp_(lo, hi); });
      return py::reinterpret_borrow<py::object>(self);
    }
    return finish(
        x, out, [&] { return ember::clamp(x, lo, hi); },
        [&](Tensor& o) { ember::clamp_out(o, x, lo, hi); }, "clamp");
  }
  auto lo = opt_scalar(min, "clamp", "min"), hi = opt_scalar(max, "clamp", "max");
  if (inplace) {
    nogil(x, [&] { return &xm.clamp_(lo, hi); });
    return py::reinterpret_borrow<py::object>(self);
  }
  return finish(
      x, out, [&] { return ember::clamp(x, lo, hi); },
      [&](Tensor& o) { ember::clamp_out(o, x, lo, hi); }, "clamp");
}

void resolve_where(py::handle a, py::handle b, Operand& x, Operand& y) {
  EMBER_CHECK_TYPE(resolve(a.ptr(), x) && resolve(b.ptr(), y),
                   "where(): arguments 'input' and 'other' must be Tensors or Numbers");
}

/// where(cond, x, y) on resolved operands (no Python objects: may run without the GIL).
Tensor where_impl(const Tensor& cond, const Operand& x, const Operand& y) {
  if (x.t && y.t) return ember::where(cond, *x.t, *y.t);
  if (x.t) return ember::where(cond, *x.t, y.s);
  if (y.t) return ember::where(cond, x.s, *y.t);
  return ember::where(cond, x.s, y.s);
}

void init_special(py::module_& m, py::class_<Tensor>& cls) {
  using py::arg;
  auto self_obj = [](py::handle s) { return py::reinterpret_borrow<py::object>(s); };

  m.def(
      "round",
      [](const Tensor& x, int64_t decimals, py::handle out) {
        return finish(
            x, out, [&] { return ember::round(x, decimals); },
            [&](Tensor& o) { ember::round_out(o, x, decimals); }, "round");
      },
      arg("input"), py::kw_only(), arg("decimals") = 0, arg("out") = py::none());
  cls.def(
      "round", [](const Tensor& x, int64_t d) { return nogil(x, [&] { return x.round(d); }); },
      py::kw_only(), arg("decimals") = 0);
  cls.def(
      "round_",
      [self_obj](py::handle s, int64_t d) {
        Tensor& x = unwrap(s.ptr());
        nogil(x, [&] { return &x.round_(d); });
        return self_obj(s);
      },
      py::kw_only(), arg("decimals") = 0);

  for (const char* name : {"clamp", "clip"}) {
    m.def(
        name,
        [](const Tensor& x, py::handle min, py::handle max, py::handle out) {
          return clamp_impl(x, min, max, out, false, py::none());
        },
        arg("input"), arg("min") = py::none(), arg("max") = py::none(), py::kw_only(),
        arg("out") = py::none());
    cls.def(
        name,
        [](const Tensor& x, py::handle min, py::handle max) {
          return clamp_impl(x, min, max, py::none(), false, py::none());
        },
        arg("min") = py::none(), arg("max") = py::none());
    cls.def((std::string(name) + "_").c_str(),
            [](py::handle s, py::handle min, py::handle max) {
              return clamp_impl(unwrap(s.ptr()), min, max, py::none(), true, s);
            },
            arg("min") = py::none(), arg("max") = py::none());
  }
  m.def(
      "clamp_min",
      [](const Tensor& x, py::handle min) {
        return clamp_impl(x, min, py::none(), py::none(), false, py::none());
      },
      arg("input"), arg("min"));
  m.def(
      "clamp_max",
      [](const Tensor& x, py::handle max) {
        return clamp_impl(x, py::none(), max, py::none(), false, py::none());
      },
      arg("input"), arg("max"));
  cls.def(
      "clamp_min",
      [](const Tensor& x, py::handle min) {
        return clamp_impl(x, min, py::none(), py::none(), false, py::none());
      },
      arg("min"));
  cls.def(
      "clamp_max",
      [](const Tensor& x, py::handle max) {
        return clamp_impl(x, py::none(), max, py::none(), false, py::none());
      },
      arg("max"));

  m.def(
      "logit",
      [](const Tensor& x, std::optional<double> eps, py::handle out) {
        return finish(
            x, out, [&] { return ember::logit(x, eps); },
            [&](Tensor& o) { write_out(o, ember::logit(x, eps), "logit"); }, "logit");
      },
      arg("input"), arg("eps") = py::none(), py::kw_only(), arg("out") = py::none());
  cls.def(
      "logit",
      [](const Tensor& x, std::optional<double> eps) {
        return nogil(x, [&] { return x.logit(eps); });
      },
      arg("eps") = py::none());
  cls.def(
      "logit_",
      [self_obj](py::handle s, std::optional<double> eps) {
        unwrap(s.ptr()).logit_(eps);
        return self_obj(s);
      },
      arg("eps") = py::none());

  m.def(
      "nan_to_num",
      [](const Tensor& x, std::optional<double> nan, std::optional<double> pinf,
         std::optional<double> ninf, py::handle out) {
        return finish(
            x, out, [&] { return ember::nan_to_num(x, nan, pinf, ninf); },
            [&](Tensor& o) { write_out(o, ember::nan_to_num(x, nan, pinf, ninf), "nan_to_num"); },
            "nan_to_num");
      },
      arg("input"), arg("nan") = 0.0, arg("posinf") = py::none(), arg("neginf") = py::none(),
      py::kw_only(), arg("out") = py::none());
  cls.def(
      "nan_to_num",
      [](const Tensor& x, std::optional<double> nan, std::optional<double> p,
         std::optional<double> n) { return nogil(x, [&] { return x.nan_to_num(nan, p, n); }); },
      arg("nan") = 0.0, arg("posinf") = py::none(), arg("neginf") = py::none());
  cls.def(
      "nan_to_num_",
      [self_obj](py::handle s, std::optional<double> nan, std::optional<double> p,
                 std::optional<double> n) {
        unwrap(s.ptr()).nan_to_num_(nan, p, n);
        return self_obj(s);
      },
      arg("nan") = 0.0, arg("posinf") = py::none(), arg("neginf") = py::none());

  // The weight is converted first: the kernel may run without the GIL.
  auto lerp = [](const Tensor& x, const Tensor& end, py::handle w) {
    if (is_tensor(w.ptr())) {
      const Tensor& wt = unwrap(w.ptr());
      return nogil(x, [&] { return ember::lerp(x, end, wt); });
    }
    const Scalar ws = to_scalar(w.ptr(), "lerp", "weight");
    return nogil(x, [&] { return ember::lerp(x, end, ws); });
  };
  m.def(
      "lerp",
      [lerp](const Tensor& x, const Tensor& end, py::handle w, py::handle out) {
        if (out.is_none()) return wrap_obj(lerp(x, end, w));
        Tensor r = lerp(x, end, w);
        return finish(
            x, out, [&] { return r; }, [&](Tensor& o) { write_out(o, r, "lerp"); }, "lerp");
      },
      arg("input"), arg("end"), arg("weight"), py::kw_only(), arg("out") = py::none());
  cls.def("lerp", lerp, arg("end"), arg("weight"));
  cls.def(
      "lerp_",
      [self_obj](py::handle s, const Tensor& end, py::handle w) {
        Tensor& x = unwrap(s.ptr());
        if (is_tensor(w.ptr()))
          x.lerp_(end, unwrap(w.ptr()));
        else
          x.lerp_(end, to_scalar(w.ptr(), "lerp_", "weight"));
        return self_obj(s);
      },
      arg("end"), arg("weight"));

  for (bool mul : {true, false}) {
    const char* name = mul ? "addcmul" : "addcdiv";
    auto fn = [mul](const Tensor& x, const Tensor& a, const Tensor& b, const Scalar& v) {
      return mul ? ember::addcmul(x, a, b, v) : ember::addcdiv(x, a, b, v);
    };
    m.def(
        name,
        [fn, name](const Tensor& x, const Tensor& a, const Tensor& b, const Scalar& v,
                   py::handle out) {
          return finish(
              x, out, [&] { return fn(x, a, b, v); },
              [&](Tensor& o) { write_out(o, fn(x, a, b, v), name); }, name);
        },
        arg("input"), arg("tensor1"), arg("tensor2"), py::kw_only(), arg("value") = 1,
        arg("out") = py::none());
    cls.def(
        name,
        [fn](const Tensor& x, const Tensor& a, const Tensor& b, const Scalar& v) {
          return nogil(x, [&] { return fn(x, a, b, v); });
        },
        arg("tensor1"), arg("tensor2"), py::kw_only(), arg("value") = 1);
    cls.def((std::string(name) + "_").c_str(),
            [self_obj, mul](py::handle s, const Tensor& a, const Tensor& b, const Scalar& v) {
              Tensor& x = unwrap(s.ptr());
              if (mul)
                x.addcmul_(a, b, v);
              else
                x.addcdiv_(a, b, v);
              return self_obj(s);
            },
            arg("tensor1"), arg("tensor2"), py::kw_only(), arg("value") = 1);
  }

  m.def(
      "where",
      [](const Tensor& c, py::handle a, py::handle b, py::handle out) {
        Operand x, y;
        resolve_where(a, b, x, y);
        return finish(
            c, out, [&] { return where_impl(c, x, y); },
            [&](Tensor& o) { write_out(o, where_impl(c, x, y), "where"); }, "where");
      },
      arg("condition"), arg("input"), arg("other"), py::kw_only(), arg("out") = py::none());
  // where(condition) is nonzero(condition, as_tuple=True).
  m.def(
      "where",
      [](const Tensor& c) {
        std::vector<Tensor> parts = nonzero_numpy(c);
        py::tuple t(parts.size());
        for (size_t i = 0; i < parts.size(); ++i) t[i] = wrap_obj(parts[i]);
        return t;
      },
      arg("condition"));
  cls.def(
      "where",
      [](const Tensor& self, const Tensor& c, py::handle b) {
        Operand x, y;
        x.t = &self;
        EMBER_CHECK_TYPE(resolve(b.ptr(), y),
                         "where(): argument 'other' must be a Tensor or a Number");
        return nogil(c, [&] { return where_impl(c, x, y); });
      },
      arg("condition"), arg("other"));

  m.def(
      "isclose",
      [](const Tensor& a, const Tensor& b, double rtol, double atol, bool eq) {
        return ember::isclose(a, b, rtol, atol, eq);
      },
      arg("input"), arg("other"), arg("rtol") = 1e-05, arg("atol") = 1e-08,
      arg("equal_nan") = false);
  cls.def(
      "isclose",
      [](const Tensor& a, const Tensor& b, double rtol, double atol, bool eq) {
        return ember::isclose(a, b, rtol, atol, eq);
      },
      arg("other"), arg("rtol") = 1e-05, arg("atol") = 1e-08, arg("equal_nan") = false);
  m.def(
      "allclose",
      [](const Tensor& a, const Tensor& b, double rtol, double atol, bool eq) {
        return ember::allclose(a, b, rtol, atol, eq);
      },
      arg("input"), arg("other"), arg("rtol") = 1e-05, arg("atol") = 1e-08,
      arg("equal_nan") = false);
  cls.def(
      "allclose",
      [](const Tensor& a, const Tensor& b, double rtol, double atol, bool eq) {
        return ember::allclose(a, b, rtol, atol, eq);
      },
      arg("other"), arg("rtol") = 1e-05, arg("atol") = 1e-08, arg("equal_nan") = false);
  m.def(
      "equal", [](const Tensor& a, const Tensor& b) { return ember::equal(a, b); }, arg("input"),
      arg("other"));
  cls.def(
      "equal", [](const Tensor& a, const Tensor& b) { return ember::equal(a, b); }, arg("other"));

  m.def(
      "result_type",
      [](py::handle a, py::handle b) {
        Operand x, y;
        EMBER_CHECK_TYPE(resolve(a.ptr(), x) && resolve(b.ptr(), y),
                         "result_type(): arguments must be Tensors or Numbers");
        if (x.t && y.t) return ember::result_type(*x.t, *y.t);
        if (x.t) return ember::result_type(*x.t, y.s);
        if (y.t) return ember::result_type(x.s, *y.t);
        return ember::result_type(x.s, y.s);
      },
      arg("tensor1"), arg("tensor2"));
  m.def("broadcast_shapes", [](py::args shapes) {
    DimVector r;
    for (py::handle s : shapes) {
      r = ember::broadcast_shapes(r, to_int_list(s.ptr(), "broadcast_shapes", "shape"));
    }
    return py::reinterpret_steal<py::object>(make_size(r));
  });

  // ---- activations with parameters: ember._C._nn (nn.functional wraps them) ----
  py::module_ nn = m.def_submodule("_nn", "activation kernels behind ember.nn.functional");
  nn.def("leaky_relu", [](const Tensor& x, const Scalar& s) { return ember::leaky_relu(x, s); });
  nn.def("leaky_relu_", [](Tensor& x, const Scalar& s) { return ember::leaky_relu_(x, s); });
  nn.def("elu", [](const Tensor& x, const Scalar& a, const Scalar& s, const Scalar& is) {
    return ember::elu(x, a, s, is);
  });
  nn.def("elu_", [](Tensor& x, const Scalar& a, const Scalar& s, const Scalar& is) {
    return ember::elu_(x, a, s, is);
  });
  nn.def("celu", [](const Tensor& x, const Scalar& a) { return ember::celu(x, a); });
  nn.def("celu_", [](Tensor& x, const Scalar& a) { return ember::celu_(x, a); });
  nn.def("gelu", [](const Tensor& x, const std::string& a) { return ember::gelu(x, a); });
  nn.def("softplus", [](const Tensor& x, const Scalar& b, const Scalar& t) {
    return ember::softplus(x, b, t);
  });
  nn.def("hardtanh", [](const Tensor& x, const Scalar& a, const Scalar& b) {
    return ember::hardtanh(x, a, b);
  });
  nn.def("hardtanh_",
         [](Tensor& x, const Scalar& a, const Scalar& b) { return ember::hardtanh_(x, a, b); });
  nn.def("hardshrink", [](const Tensor& x, const Scalar& l) { return ember::hardshrink(x, l); });
  nn.def("softshrink", [](const Tensor& x, const Scalar& l) { return ember::softshrink(x, l); });
  nn.def("threshold", [](const Tensor& x, const Scalar& t, const Scalar& v) {
    return ember::threshold(x, t, v);
  });
  nn.def("threshold_",
         [](Tensor& x, const Scalar& t, const Scalar& v) { return ember::threshold_(x, t, v); });
}

}  // namespace

void init_elementwise(py::module_& m) {
  register_binary(m, std::make_integer_sequence<int, kNumBinary>{});
  register_unary(m, std::make_integer_sequence<int, kNumUnary>{});
  // Unary operators go through the type's number slots directly.
  static PyMethodDef unary_dunders[] = {
      {"__neg__", neg_dunder, METH_NOARGS, nullptr},
      {"__abs__", abs_dunder, METH_NOARGS, nullptr},
      {"__invert__", invert_dunder, METH_NOARGS, nullptr},
      {"__pos__", pos_dunder, METH_NOARGS, nullptr},
  };
  for (PyMethodDef& d : unary_dunders) add_method(&d);
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(reinterpret_cast<PyObject*>(tensor_type));
  init_special(m, cls);
}

}  // namespace ember::python
