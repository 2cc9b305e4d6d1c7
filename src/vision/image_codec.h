#pragma once
#include "upper_layer.h"  // Note [Layer includes]
// Byte-level PNG and JPEG codecs with no Tensor (only <ember/error.h>, libpng and libjpeg), so
// the fuzzers compile these units alone. Images are interleaved H×W×C rows; 16-bit PNG samples
// are host-order uint16 pairs. All input is untrusted: every defect throws ember::Error (the
// codec's own message after "[decode_png]" / "[decode_jpeg]"), never crashes or leaks.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ember::vision::codec {

/// How decoded pixels are converted (the values of torchvision's ImageReadMode).
enum class Mode : int { Unchanged = 0, Gray = 1, GrayAlpha = 2, RGB = 3, RGBA = 4 };

/// A decoded image: `height` rows of `width` pixels of `channels` samples of `bit_depth` bits.
struct Image {
  int64_t height = 0;
  int64_t width = 0;
  int channels = 0;
  int bit_depth = 8;            ///< 8, or 16 for 16-bit PNG decoded with allow_16_bits
  std::vector<uint8_t> pixels;  ///< height * width * channels * (bit_depth / 8) bytes
};

/// Decoded images larger than this many bytes are refused by default.
constexpr size_t kDefaultMaxBytes = size_t(1) << 36;

/// Whether the bytes start with the PNG signature.
bool is_png(const uint8_t* data, size_t size);
/// Whether the bytes start with a JPEG start-of-image marker (FF D8 FF).
bool is_jpeg(const uint8_t* data, size_t size);

/// Decodes a PNG. Palette images expand to RGB (RGBA when they carry transparency); bit depths
/// below 8 expand to 8; 16-bit images throw unless `allow_16_bits`. Throws ember::Error on a
/// corrupt, truncated or oversized (> max_bytes decoded) stream.
Image decode_png(const uint8_t* data, size_t size, Mode mode, bool allow_16_bits = false,
                 size_t max_bytes = kDefaultMaxBytes);

/// Decodes a baseline or progressive JPEG (gray, YCbCr/RGB, CMYK in Unchanged mode only).
/// GrayAlpha and RGBA modes are refused. Throws ember::Error on corrupt or truncated input.
Image decode_jpeg(const uint8_t* data, size_t size, Mode mode, size_t max_bytes = kDefaultMaxBytes);

/// Encodes 8-bit H×W×C pixels (C in 1..4: gray, gray+alpha, RGB, RGBA) as PNG with zlib
/// `level` in 0..9.
std::vector<uint8_t> encode_png(const uint8_t* pixels, int64_t height, int64_t width, int channels,
                                int level);

/// Encodes 8-bit H×W×C pixels (C 1 or 3) as a baseline JPEG of `quality` in 1..100.
std::vector<uint8_t> encode_jpeg(const uint8_t* pixels, int64_t height, int64_t width, int channels,
                                 int quality);

}  // namespace ember::vision::codec
