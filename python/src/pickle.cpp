// Bindings: see init_pickle in pyember.h. ember._C._pickle: PyTorch checkpoints (the archive,
// the restricted unpickler for weights_only loading) and the storage helpers that
// ember.serialization's torch-format writer and Tensor pickling use.
#include <unordered_map>
#include <unordered_set>

#include "pyember.h"
#include "serialize/pt_loader.h"

namespace ember::python {

namespace {

// An opened checkpoint; a bytes source stays referenced as long as the archive lives.
struct PyArchive {
  py::object keep;
  std::unique_ptr<pt::Archive> archive;
};

PyArchive open_archive(py::object src, const std::string& where) {
  PyArchive a;
  std::shared_ptr<const zip::Source> source;
  if (PyBytes_Check(src.ptr())) {
    a.keep = src;
    source = std::make_shared<zip::MemorySource>(PyBytes_AS_STRING(src.ptr()),
                                                 size_t(PyBytes_GET_SIZE(src.ptr())));
  } else {
    source = std::make_shared<zip::FileSource>(to_string(src.ptr(), "load", "f"), "load");
  }
  uint8_t head[16] = {};
  size_t n = size_t(std::min<uint64_t>(source->size(), sizeof head));
  source->read(0, head, n);
  if (!zip::has_zip_magic(head, n)) pt::throw_not_a_checkpoint(head, n, where, "load");
  a.archive = std::make_unique<pt::Archive>(std::move(source), where, "load");
  return a;
}

// A tensor of `dtype` over `storage` with the given geometry, checked to stay inside it.
Tensor tensor_over(const Storage& storage, ScalarType dtype, int64_t offset, IntArrayRef sizes,
                   IntArrayRef strides) {
  EMBER_CHECK(sizes.size() == strides.size(), "[load] a tensor has ", sizes.size(), " sizes but ",
              strides.size(), " strides");
  EMBER_CHECK(offset >= 0, "[load] negative storage offset ", offset);
  const int64_t capacity = int64_t(storage.nbytes() / elementSize(dtype));
  int64_t last = offset;
  bool empty = false;
  for (size_t d = 0; d < sizes.size(); ++d) {
    EMBER_CHECK(sizes[d] >= 0 && strides[d] >= 0, "[load] negative size or stride in ", sizes,
                " / ", strides);
    if (sizes[d] == 0) empty = true;
  }
  if (!empty) {
    for (size_t d = 0; d < sizes.size(); ++d) {
      int64_t step = 0;
      EMBER_CHECK(!__builtin_mul_overflow(sizes[d] - 1, strides[d], &step) &&
                      !__builtin_add_overflow(last, step, &last),
                  "[load] the tensor's extent overflows");
    }
  }
  EMBER_CHECK(empty ? offset <= capacity : last < capacity, "[load] a tensor of size ", sizes,
              ", stride ", strides, " and offset ", offset, " does not fit its storage of ",
              capacity, " elements");
  return Tensor(make_intrusive<TensorImpl>(storage, dtype, sizes, strides, offset));
}

// A 1-D tensor of `dtype` spanning all of `t`'s storage.
Tensor storage_view(const Tensor& t, ScalarType dtype) {
  int64_t n = int64_t(t.storage().nbytes() / elementSize(dtype));
  return Tensor(make_intrusive<TensorImpl>(t.storage(), dtype, IntArrayRef({n})));
}

constexpr int kMaxDepth = 1000;

// The unpickled graph as Python objects: one Python object per arena object (sharing and
// list/dict cycles kept), tensors over the restored storages.
class ToPython {
 public:
  ToPython(const std::vector<Storage>& storages, const std::vector<Tensor>& storage_tensors,
           const std::string& where)
      : storages_(storages), storage_tensors_(storage_tensors), where_(where) {
    auto collections = py::module_::import("collections");
    ordered_dict_ = collections.attr("OrderedDict");
    parameter_ = py::module_::import("ember.nn").attr("Parameter");
  }

  py::object convert(const pickle::Value& v, int depth) {
    using pickle::Kind;
    switch (v.kind) {
      case Kind::None:
        return py::none();
      case Kind::Bool:
        return py::bool_(v.i != 0);
      case Kind::Int:
        return py::int_(v.i);
      case Kind::Float:
        return py::float_(v.f);
      case Kind::Dtype:
        return py::reinterpret_steal<py::object>(dtype_object(ScalarType(v.i)));
      default:
        break;
    }
    EMBER_CHECK(depth < kMaxDepth, "[load] ", where_, ": containers nest deeper than ", kMaxDepth,
                " levels");
    const pickle::Object* o = v.obj;
    if (auto it = done_.find(o); it != done_.end()) return it->second;
    EMBER_CHECK(!active_.count(o), "[load] ", where_,
                ": a reference cycle runs through a tuple or set, which cannot be rebuilt");
    active_.insert(o);
    py::object out = make(*o, depth);
    active_.erase(o);
    done_.emplace(o, out);
    return out;
  }

 private:
  py::object make(const pickle::Object& o, int depth) {
    using pickle::Kind;
    switch (o.kind) {
      case Kind::BigInt:
        return py::module_::import("builtins")
            .attr("int")
            .attr("from_bytes")(py::bytes(o.str), "little", py::arg("signed") = true);
      case Kind::Str: {
        PyObject* s = PyUnicode_DecodeUTF8(o.str.data(), Py_ssize_t(o.str.size()), "surrogatepass");
        if (!s) throw py::error_already_set();
        return py::reinterpret_steal<py::object>(s);
      }
      case Kind::Bytes:
        return py::bytes(o.str);
      case Kind::List: {
        py::list l;
        done_.emplace(&o, l);  // before the items: a list may contain itself
        for (const auto& x : o.items) l.append(convert(x, depth + 1));
        return l;
      }
      case Kind::Tuple: {
        py::tuple t(o.items.size());
        for (size_t k = 0; k < o.items.size(); ++k) t[k] = convert(o.items[k], depth + 1);
        if (!o.ordered) return t;
        DimVector dims;
        for (const auto& x : o.items) dims.push_back(x.i);
        return py::reinterpret_steal<py::object>(make_size(dims));
      }
      case Kind::Set: {
        py::list items;
        for (const auto& x : o.items) items.append(convert(x, depth + 1));
        auto builtins = py::module_::import("builtins");
        return builtins.attr(o.ordered ? "frozenset" : "set")(items);
      }
      case Kind::Dict: {
        py::object d = o.ordered ? ordered_dict_() : py::dict();
        done_.emplace(&o, d);
        for (size_t k = 0; k + 1 < o.items.size(); k += 2) {
          py::object key = convert(o.items[k], depth + 1);
          d[key] = convert(o.items[k + 1], depth + 1);
        }
        for (size_t k = 0; k + 1 < o.attrs.size(); k += 2)
          py::setattr(d, convert(o.attrs[k], depth + 1), convert(o.attrs[k + 1], depth + 1));
        return d;
      }
      case Kind::Storage:
        return wrap_obj(storage_tensors_[o.storage->index]);
      case Kind::Tensor: {
        const pickle::TensorInfo& info = *o.tensor;
        Tensor t = pt::make_tensor(info, storages_[info.storage->storage->index], where_);
        if (!info.parameter) return wrap_obj(t);
        return parameter_(wrap_obj(t.detach()), info.requires_grad);
      }
      case Kind::Global:
        EMBER_THROW(Error, "[load] ", where_, ": the data holds the bare global '", o.str,
                    "', which has no ember value");
      default:
        break;
    }
    EMBER_THROW(InternalError, "[load] unexpected object kind");
  }

  const std::vector<Storage>& storages_;
  const std::vector<Tensor>& storage_tensors_;
  const std::string& where_;
  py::object ordered_dict_, parameter_;
  std::unordered_map<const pickle::Object*, py::object> done_;
  std::unordered_set<const pickle::Object*> active_;
};

}  // namespace

void init_pickle(py::module_& m) {
  auto s = m.def_submodule("_pickle", "PyTorch checkpoints (ember.serialization)");

  py::class_<PyArchive>(s, "Archive", "An opened torch.save checkpoint (a zip archive).")
      .def(py::init([](py::object src, const std::string& where) {
             return open_archive(std::move(src), where);
           }),
           py::arg("source"), py::arg("where"),
           "Opens a checkpoint from a path or from bytes; `where` names it in messages.")
      .def_property_readonly("prefix", [](const PyArchive& a) { return a.archive->prefix(); })
      .def("records",
           [](const PyArchive& a) {
             std::vector<std::string> names;
             for (const auto& e : a.archive->zip().entries()) names.push_back(e.name);
             return names;
           })
      .def(
          "read_record",
          [](const PyArchive& a, const std::string& name) {
            return py::bytes(a.archive->read_record(name));
          },
          py::arg("name"), "The bytes of a record, relative to the archive's folder.")
      .def(
          "load_storage",
          [](const PyArchive& a, const std::string& key, ScalarType dtype, int64_t numel) {
            EMBER_CHECK(numel >= 0 && uint64_t(numel) <= (uint64_t(1) << 62) / elementSize(dtype),
                        "[load] storage '", key, "' has the impossible size ", numel);
            a.archive->check_storage(key, uint64_t(numel) * elementSize(dtype));
            pickle::StorageInfo info;
            info.key = key;
            info.dtype = dtype;
            info.numel = numel;
            Tensor t;
            {
              py::gil_scoped_release nogil;
              t = pt::read_storage_tensor(*a.archive, info);
            }
            return wrap_obj(t);
          },
          py::arg("key"), py::arg("dtype"), py::arg("numel"),
          "Storage `key` as a 1-D CPU tensor of `numel` elements of `dtype`.")
      .def(
          "unpickle",
          [](const PyArchive& a, py::object restore) {
            const std::string& where = a.archive->where();
            pickle::Result r = a.archive->unpickle_weights_only();
            std::vector<Storage> storages;
            std::vector<Tensor> storage_tensors;
            for (const pickle::Object* so : r.storages) {
              Tensor base;
              {
                py::gil_scoped_release nogil;
                base = pt::read_storage_tensor(*a.archive, *so->storage);
              }
              py::object moved = restore(wrap_obj(base), so->storage->location);
              EMBER_CHECK_TYPE(is_tensor(moved.ptr()), "[load] map_location returned a ",
                               std::string(py::str(py::type::of(moved).attr("__name__"))),
                               " for storage '", so->storage->key, "'; expected a tensor");
              storage_tensors.push_back(unwrap(moved.ptr()));
              storages.push_back(storage_tensors.back().storage());
            }
            return ToPython(storages, storage_tensors, where).convert(r.root, 0);
          },
          py::arg("restore"),
          "data.pkl through the restricted unpickler (weights_only). `restore(storage, location)` "
          "maps each storage (a 1-D CPU tensor) to the tensor to use.");

  s.def(
      "from_storage",
      [](const Tensor& base, int64_t offset, const std::vector<int64_t>& size,
         const std::vector<int64_t>& stride) {
        return wrap_obj(tensor_over(base.storage(), base.dtype(), offset, size, stride));
      },
      py::arg("storage"), py::arg("offset"), py::arg("size"), py::arg("stride"),
      "A tensor of storage's dtype over storage's memory with the given geometry (checked).");
  s.def(
      "storage_view",
      [](const Tensor& t, std::optional<ScalarType> dtype) {
        return wrap_obj(storage_view(t, dtype.value_or(t.dtype())));
      },
      py::arg("tensor"), py::arg("dtype") = py::none(),
      "A 1-D tensor spanning all of the tensor's storage (in `dtype`, default the tensor's).");
  s.def(
      "storage_key",
      [](const Tensor& t) {
        return py::make_tuple(reinterpret_cast<uintptr_t>(t.storage().unsafeGetStorageImpl()),
                              t.storage().nbytes());
      },
      py::arg("tensor"), "(identity, nbytes) of the tensor's storage.");
  s.def(
      "storage_bytes",
      [](const Tensor& t) {
        Tensor bytes = storage_view(t, kByte);
        if (!bytes.is_cpu()) bytes = bytes.cpu();
        return py::bytes(static_cast<const char*>(bytes.data_ptr()), size_t(bytes.numel()));
      },
      py::arg("tensor"), "A copy of all the bytes of the tensor's storage.");
  s.def(
      "storage_from_bytes",
      [](py::bytes data, ScalarType dtype) {
        std::string_view b(PyBytes_AS_STRING(data.ptr()), size_t(PyBytes_GET_SIZE(data.ptr())));
        int64_t n = int64_t(b.size() / elementSize(dtype));
        Tensor t = empty({n}, TensorOptions().dtype(dtype));
        std::memcpy(t.data_ptr(), b.data(), size_t(n) * elementSize(dtype));
        return wrap_obj(t);
      },
      py::arg("data"), py::arg("dtype"), "A 1-D CPU tensor of `dtype` holding a copy of `data`.");
}

}  // namespace ember::python
