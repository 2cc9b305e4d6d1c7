// The binding of the image codecs (ember._C._vision); ember.vision.io wraps these.
#include "ember/vision.h"
#include "pyember.h"

namespace ember::python {

namespace {
vision::ImageReadMode read_mode(int64_t mode) {
  EMBER_CHECK_VALUE(mode >= 0 && mode <= 4, "[ImageReadMode] unknown mode ", mode,
                    " (expected 0 to 4)");
  return vision::ImageReadMode(mode);
}
}  // namespace

void init_vision(py::module_& m) {
  auto v = m.def_submodule("_vision", "PNG and JPEG codecs (ember.vision.io)");
  v.def(
      "read_file",
      [](const std::string& path) {
        py::gil_scoped_release nogil;
        return vision::read_file(path);
      },
      py::arg("path"), "The bytes of a file as a 1-D uint8 tensor.");
  v.def(
      "write_file",
      [](const std::string& path, const Tensor& data) {
        py::gil_scoped_release nogil;
        vision::write_file(path, data);
      },
      py::arg("filename"), py::arg("data"), "Writes a 1-D uint8 tensor to a file.");
  v.def(
      "decode_png",
      [](const Tensor& data, int64_t mode, bool allow_16_bits) {
        auto m = read_mode(mode);
        py::gil_scoped_release nogil;
        return vision::decode_png(data, m, allow_16_bits);
      },
      py::arg("input"), py::arg("mode") = 0, py::arg("allow_16_bits") = false,
      "PNG bytes to a uint8 C×H×W tensor (int32 for 16-bit images with allow_16_bits).");
  v.def(
      "decode_jpeg",
      [](const Tensor& data, int64_t mode) {
        auto m = read_mode(mode);
        py::gil_scoped_release nogil;
        return vision::decode_jpeg(data, m);
      },
      py::arg("input"), py::arg("mode") = 0, "JPEG bytes to a uint8 C×H×W tensor.");
  v.def(
      "decode_image",
      [](const Tensor& data, int64_t mode) {
        auto m = read_mode(mode);
        py::gil_scoped_release nogil;
        return vision::decode_image(data, m);
      },
      py::arg("input"), py::arg("mode") = 0, "PNG or JPEG bytes to a uint8 C×H×W tensor.");
  v.def(
      "encode_png",
      [](const Tensor& image, int64_t level) {
        py::gil_scoped_release nogil;
        return vision::encode_png(image, level);
      },
      py::arg("input"), py::arg("compression_level") = 6, "A uint8 C×H×W tensor as PNG bytes.");
  v.def(
      "encode_jpeg",
      [](const Tensor& image, int64_t quality) {
        py::gil_scoped_release nogil;
        return vision::encode_jpeg(image, quality);
      },
      py::arg("input"), py::arg("quality") = 75, "A uint8 C×H×W tensor as JPEG bytes.");
}

}  // namespace ember::python
