// The binding of the IDX reader and batch image transforms (ember._C._data).
#include "ember/data.h"
#include "pyember.h"

namespace ember::python {

void init_data(py::module_& m) {
  auto d = m.def_submodule("_data", "IDX files and batch image transforms (ember.vision)");
  d.def(
      "read_idx",
      [](const std::string& path) {
        py::gil_scoped_release nogil;
        return data::read_idx(path);
      },
      py::arg("path"), "An IDX file (plain or gzip) as a tensor of its type and dims.");
  d.def(
      "read_mnist",
      [](const std::string& root, bool train) {
        data::Example e;
        {
          py::gil_scoped_release nogil;
          e = data::read_mnist(root, train);
        }
        return py::make_tuple(wrap_obj(e.data), wrap_obj(e.target));
      },
      py::arg("root"), py::arg("train"),
      "MNIST-format images (float32 N×1×H×W in [0, 1]) and int64 labels from `root`.");
  d.def(
      "random_crop",
      [](const Tensor& x, std::vector<int64_t> size, int64_t padding,
         std::optional<Generator> gen) {
        auto t = data::transforms::RandomCrop(std::move(size), padding, gen);
        py::gil_scoped_release nogil;
        return t(x);
      },
      py::arg("input"), py::arg("size"), py::arg("padding") = 0, py::arg("generator") = py::none(),
      "A random crop per image of a batch (zero padding).");
  d.def(
      "random_horizontal_flip",
      [](const Tensor& x, double p, std::optional<Generator> gen) {
        auto t = data::transforms::RandomHorizontalFlip(p, gen);
        py::gil_scoped_release nogil;
        return t(x);
      },
      py::arg("input"), py::arg("p") = 0.5, py::arg("generator") = py::none(),
      "Mirrors each image of a batch with probability p.");
  d.def(
      "random_rotation",
      [](const Tensor& x, double degrees, std::optional<Generator> gen) {
        auto t = data::transforms::RandomRotation(degrees, gen);
        py::gil_scoped_release nogil;
        return t(x);
      },
      py::arg("input"), py::arg("degrees"), py::arg("generator") = py::none(),
      "Rotates each image of a batch by a random angle in [-degrees, degrees].");
  d.def(
      "rotate",
      [](const Tensor& x, double degrees) {
        py::gil_scoped_release nogil;
        return data::transforms::rotate(x, degrees);
      },
      py::arg("input"), py::arg("angle"),
      "Rotates images counter-clockwise by `angle` degrees (nearest, zero fill).");
  d.def(
      "convert_image_dtype",
      [](const Tensor& x, ScalarType dtype) {
        return data::transforms::ConvertImageDtype(dtype)(x);
      },
      py::arg("image"), py::arg("dtype"), "torchvision's convert_image_dtype.");
}

}  // namespace ember::python
