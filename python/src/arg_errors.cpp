// PyTorch's wording for calls whose argument types match no signature.
//
// Note [Argument type errors]
// pybind11 reports a call that matches no overload as "f(): incompatible function arguments.
// The following argument types are supported: ...", listing C++-flavoured signatures and the
// reprs of the arguments. PyTorch says "f() received an invalid combination of arguments - got
// (Tensor, str), but expected one of: * (Tensor input, Tensor other, *, Number alpha)". Every
// pybind11 function shares one dispatcher, reached through its own PyMethodDef; once the module
// is built, `install_argument_errors` points each of those at `dispatch`, which calls the
// dispatcher and, only when it fails with pybind11's message, rewrites the TypeError from the
// function's records. A successful call pays one extra indirect call and one pointer test.
#include <cstring>
#include <unordered_set>

#include "pyember.h"

namespace ember::python {
namespace {

using Dispatcher = PyObject* (*)(PyObject*, PyObject*, PyObject*);
Dispatcher pybind_dispatcher = nullptr;

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::string trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return std::string(s);
}

/// Splits `s` at top-level occurrences of `sep` (outside brackets and quotes).
std::vector<std::string> split_top(std::string_view s, std::string_view sep) {
  std::vector<std::string> out;
  int depth = 0;
  char quote = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (quote) {
      if (c == '\\') ++i;
      else if (c == quote) quote = 0;
      continue;
    }
    if (c == '\'' || c == '"') quote = c;
    else if (c == '(' || c == '[' || c == '{') ++depth;
    else if (c == ')' || c == ']' || c == '}') --depth;
    else if (depth == 0 && s.substr(i, sep.size()) == sep) {
      out.emplace_back(s.substr(start, i - start));
      start = i + sep.size();
      i = start - 1;
    }
  }
  out.emplace_back(s.substr(start));
  return out;
}

std::string plural(const std::string& t) {
  if (t == "int" || t == "float" || t == "bool" || t == "Tensor") return t + "s";
  return t;
}

/// A pybind11 type annotation as PyTorch spells argument types.
std::string torch_type(std::string t) {
  t = trim(t);
  if (t.empty()) return t;
  for (std::string_view p : {"ember._C.", "ember."}) {
    if (starts_with(t, p)) t = t.substr(p.size());
  }
  auto inner = [&](size_t prefix) { return t.substr(prefix, t.size() - prefix - 1); };
  if (t.back() == ']') {
    if (starts_with(t, "Optional[")) return torch_type(inner(9));
    if (starts_with(t, "Union[")) {
      std::string r;
      for (const auto& part : split_top(inner(6), ",")) {
        r += (r.empty() ? "" : " or ") + torch_type(part);
      }
      return r;
    }
    for (std::string_view p : {"List[", "list[", "Sequence[", "Tuple[", "tuple["}) {
      if (starts_with(t, p)) {
        auto parts = split_top(inner(p.size()), ",");
        std::string first = torch_type(parts[0]);
        for (const auto& part : parts) {
          if (torch_type(part) != first && trim(part) != "...") return "tuple";
        }
        return "tuple of " + plural(first);
      }
    }
    if (starts_with(t, "Callable[")) return "Callable";
  }
  if (t == "dtype" || t == "device" || t == "Generator" || t == "Size" || t == "finfo" ||
      t == "iinfo") {
    return "ember." + t;
  }
  if (t == "handle") return "object";
  return t;
}

/// "(self: ember._C.Tensor, other: object, *, alpha: Number = 1) -> ember._C.Tensor" as
/// "(object other, *, Number alpha)" (the self of a method is left out, as PyTorch does).
std::string torch_signature(std::string_view sig, bool drop_self) {
  const size_t open = sig.find('(');
  const size_t arrow = sig.rfind(") -> ");
  if (open == std::string_view::npos || arrow == std::string_view::npos || arrow < open) {
    return std::string(sig);
  }
  std::string_view body = sig.substr(open + 1, arrow - open - 1);
  std::string out = "(";
  bool first = true;
  bool dropped = !drop_self;
  for (const std::string& raw : split_top(body, ", ")) {
    std::string p = trim(raw);
    if (p.empty()) continue;
    if (!dropped) {
      dropped = true;
      continue;
    }
    std::string item;
    if (p == "*" || p == "/" || starts_with(p, "*")) {
      if (p == "/") continue;
      item = p.substr(0, p.find(':'));
    } else {
      const size_t colon = p.find(": ");
      if (colon == std::string::npos) {
        item = p;
      } else {
        std::string name = p.substr(0, colon);
        std::string type = split_top(std::string_view(p).substr(colon + 2), " = ")[0];
        item = torch_type(type) + " " + name;
      }
    }
    out += (first ? "" : ", ") + item;
    first = false;
  }
  return out + ")";
}

/// The type of a given argument as PyTorch prints it in "got (...)".
std::string given_type(PyObject* o) {
  if (is_tensor(o)) {
    return Py_TYPE(o) == tensor_type ? std::string("Tensor") : std::string(Py_TYPE(o)->tp_name);
  }
  std::string name = Py_TYPE(o)->tp_name;
  if (starts_with(name, "ember._C.")) return "ember." + name.substr(9);
  const size_t dot = name.rfind('.');
  return dot == std::string::npos ? name : name.substr(dot + 1);
}

/// Replaces pybind11's "incompatible function arguments" TypeError (already set) with
/// PyTorch's wording; leaves any other error alone.
void rewrite_error(PyObject* capsule, PyObject* args, PyObject* kwargs) {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  auto restore = [&] { PyErr_Restore(type, value, tb); };
  PyObject* msg_obj = value ? PyObject_Str(value) : nullptr;
  if (!msg_obj) {
    PyErr_Clear();
    return restore();
  }
  const char* msg = PyUnicode_AsUTF8(msg_obj);
  const bool ours = msg && (std::strstr(msg, "(): incompatible function arguments.") ||
                            std::strstr(msg, "(): incompatible constructor arguments."));
  Py_DECREF(msg_obj);
  if (!ours || !PyCapsule_CheckExact(capsule)) {
    PyErr_Clear();
    return restore();
  }
  const auto* rec = static_cast<const py::detail::function_record*>(
      PyCapsule_GetPointer(capsule, PyCapsule_GetName(capsule)));
  if (!rec) {
    PyErr_Clear();
    return restore();
  }
  std::string text;
  try {
    const bool drop_self = rec->is_method || rec->is_constructor;
    std::string name = rec->name;
    if (rec->is_constructor && rec->scope) {
      name = py::str(rec->scope.attr("__name__")).cast<std::string>();
    }
    text = name + "() received an invalid combination of arguments - got (";
    bool first = true;
    const Py_ssize_t n = args ? PyTuple_GET_SIZE(args) : 0;
    for (Py_ssize_t i = drop_self ? 1 : 0; i < n; ++i) {
      text += (first ? "" : ", ") + given_type(PyTuple_GET_ITEM(args, i));
      first = false;
    }
    if (kwargs) {
      PyObject *key, *val;
      Py_ssize_t pos = 0;
      while (PyDict_Next(kwargs, &pos, &key, &val)) {
        const char* k = PyUnicode_AsUTF8(key);
        text += std::string(first ? "" : ", ") + (k ? k : "?") + "=" + given_type(val);
        first = false;
      }
    }
    text += "), but expected ";
    std::vector<std::string> sigs;
    for (const auto* it = rec; it; it = it->next) {
      sigs.push_back(torch_signature(it->signature ? it->signature : "", drop_self));
    }
    if (sigs.size() == 1) {
      text += sigs[0];
    } else {
      text += "one of:";
      for (const auto& s : sigs) text += "\n * " + s;
      text += "\n";
    }
  } catch (...) {
    PyErr_Clear();
    return restore();
  }
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(tb);
  PyErr_SetString(PyExc_TypeError, text.c_str());
}

PyObject* dispatch(PyObject* self, PyObject* args, PyObject* kwargs) {
  PyObject* result = pybind_dispatcher(self, args, kwargs);
  if (!result && PyErr_ExceptionMatches(PyExc_TypeError)) rewrite_error(self, args, kwargs);
  return result;
}

void patch_function(PyObject* f) {
  if (!f) return;
  if (PyInstanceMethod_Check(f)) f = PyInstanceMethod_GET_FUNCTION(f);
  if (!PyCFunction_Check(f)) return;
  PyMethodDef* def = reinterpret_cast<PyCFunctionObject*>(f)->m_ml;
  if (reinterpret_cast<Dispatcher>(def->ml_meth) == pybind_dispatcher) {
    def->ml_meth = reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(dispatch));
  }
}

void patch_attribute(PyObject* value) {
  if (PyObject_TypeCheck(value, &PyProperty_Type)) {
    for (const char* part : {"fget", "fset"}) {
      PyObject* f = PyObject_GetAttrString(value, part);
      if (!f) {
        PyErr_Clear();
        continue;
      }
      patch_function(f);
      Py_DECREF(f);
    }
  } else if (PyObject_TypeCheck(value, &PyStaticMethod_Type) ||
             PyObject_TypeCheck(value, &PyClassMethod_Type)) {
    PyObject* f = PyObject_GetAttrString(value, "__func__");
    if (!f) return PyErr_Clear();
    patch_function(f);
    Py_DECREF(f);
  } else {
    patch_function(value);
  }
}

void patch_namespace(PyObject* ns, const std::string& prefix, std::unordered_set<PyObject*>& seen) {
  if (!seen.insert(ns).second) return;
  PyObject* dict = PyType_Check(ns) ? reinterpret_cast<PyTypeObject*>(ns)->tp_dict
                                    : PyModule_GetDict(ns);
  if (!dict) return;
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (PyDict_Next(dict, &pos, &key, &value)) {
    if (PyModule_Check(value)) {
      const char* name = PyModule_GetName(value);
      if (name && starts_with(name, prefix)) patch_namespace(value, prefix, seen);
      else PyErr_Clear();
    } else if (PyType_Check(value)) {
      PyObject* mod = PyObject_GetAttrString(value, "__module__");
      if (mod && PyUnicode_Check(mod) && starts_with(PyUnicode_AsUTF8(mod), prefix)) {
        patch_namespace(value, prefix, seen);
      }
      Py_XDECREF(mod);
      PyErr_Clear();
    } else {
      patch_attribute(value);
    }
  }
}

}  // namespace

void install_argument_errors(py::module_& m) {
  py::cpp_function probe([] {});
  pybind_dispatcher = reinterpret_cast<Dispatcher>(reinterpret_cast<void (*)()>(
      reinterpret_cast<PyCFunctionObject*>(probe.ptr())->m_ml->ml_meth));
  std::unordered_set<PyObject*> seen;
  patch_namespace(m.ptr(), "ember", seen);
}

}  // namespace ember::python
