#pragma once
/// Image files as tensors, as torchvision.io (0.14): PNG and JPEG decoding to uint8 C×H×W
/// tensors, encoding from them, and whole-file reads and writes. Encoded images are 1-D uint8
/// CPU tensors of the file's bytes.

#include <cstdint>
#include <string>

#include "ember/error.h"
#include "ember/tensor.h"

namespace ember::vision {

/// How decoded pixels are converted: UNCHANGED keeps the file's channels; GRAY, GRAY_ALPHA, RGB
/// and RGB_ALPHA convert to 1, 2, 3 or 4 channels (a missing alpha channel becomes 255).
enum class ImageReadMode : int { UNCHANGED = 0, GRAY = 1, GRAY_ALPHA = 2, RGB = 3, RGB_ALPHA = 4 };

/// A corrupt, truncated or unsupported image (a RuntimeError in Python, as in torchvision).
class ImageError : public Error {
 public:
  explicit ImageError(const std::string& msg) : Error(msg, ErrorKind::Runtime) {}
};

/// The bytes of a file as a 1-D uint8 tensor. Throws Error when the file cannot be read.
Tensor read_file(const std::string& path);

/// Writes a 1-D uint8 tensor to `path`. The file is written under a temporary name and renamed,
/// so a failure never leaves a half-written file.
void write_file(const std::string& path, const Tensor& data);

/// Decodes PNG bytes to a uint8 C×H×W tensor. Palette images expand to RGB (RGBA with
/// transparency), gray below 8 bits to 8 bits; RGB→gray uses the ITU-R 601 weights. 16-bit
/// images throw unless `allow_16_bits`, which returns int32 samples in [0, 65535].
Tensor decode_png(const Tensor& data, ImageReadMode mode = ImageReadMode::UNCHANGED,
                  bool allow_16_bits = false);

/// Decodes JPEG bytes to a uint8 C×H×W tensor (1 channel gray, 3 RGB, 4 CMYK when UNCHANGED).
/// GRAY_ALPHA and RGB_ALPHA throw ImageError.
Tensor decode_jpeg(const Tensor& data, ImageReadMode mode = ImageReadMode::UNCHANGED);

/// Decodes PNG or JPEG bytes, chosen by the file's signature.
Tensor decode_image(const Tensor& data, ImageReadMode mode = ImageReadMode::UNCHANGED);

/// read_file then decode_image.
Tensor read_image(const std::string& path, ImageReadMode mode = ImageReadMode::UNCHANGED);

/// Encodes a uint8 C×H×W tensor (C 1–4: gray, gray+alpha, RGB, RGBA) as PNG bytes with zlib
/// `compression_level` in 0..9.
Tensor encode_png(const Tensor& image, int64_t compression_level = 6);

/// Encodes a uint8 C×H×W tensor (C 1 or 3) as JPEG bytes of `quality` in 1..100.
Tensor encode_jpeg(const Tensor& image, int64_t quality = 75);

/// encode_png then write_file.
void write_png(const Tensor& image, const std::string& path, int64_t compression_level = 6);

/// encode_jpeg then write_file.
void write_jpeg(const Tensor& image, const std::string& path, int64_t quality = 75);

}  // namespace ember::vision
