// The binding of safetensors save and load (ember._C._serialize). ember.serialization builds
// the nested-structure layer on top in Python.
#include "ember/serialize.h"
#include "pyember.h"

namespace ember::python {

void init_serialize(py::module_& m) {
  auto s = m.def_submodule("_serialize", "safetensors files (ember.serialization)");
  s.def(
      "save",
      [](const std::string& path, const std::vector<std::pair<std::string, Tensor>>& items,
         const std::map<std::string, std::string>& metadata) {
        OrderedDict<std::string, Tensor> d;
        for (const auto& [k, t] : items) {
          EMBER_CHECK(!d.contains(k), "[save] duplicate key '", k, "'");
          d.insert(k, t);
        }
        py::gil_scoped_release nogil;
        save(d, path, metadata);
      },
      py::arg("path"), py::arg("items"), py::arg("metadata") = std::map<std::string, std::string>{},
      "Writes (name, tensor) pairs and string metadata to a safetensors file, atomically.");
  s.def(
      "load",
      [](const std::string& path) {
        std::map<std::string, std::string> meta;
        OrderedDict<std::string, Tensor> d;
        {
          py::gil_scoped_release nogil;
          d = load_dict(path, &meta);
        }
        std::vector<std::pair<std::string, Tensor>> items;
        for (auto& it : d) items.emplace_back(it.key(), it.value());
        return py::make_tuple(items, meta);
      },
      py::arg("path"), "Reads a safetensors file: ([(name, tensor)], metadata dict).");
  s.def(
      "metadata",
      [](const std::string& path) {
        py::gil_scoped_release nogil;
        return safetensors_metadata(path);
      },
      py::arg("path"), "The __metadata__ of a safetensors file (reads only the header).");
}

}  // namespace ember::python
