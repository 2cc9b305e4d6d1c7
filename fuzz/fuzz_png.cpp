// libFuzzer target: the PNG decoder on arbitrary bytes in every read mode. Bad input must throw
// ember::Error; a decoded image must have the size its layout promises and re-encode to a PNG
// that decodes to the same pixels.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "ember/error.h"
#include "vision/image_codec.h"

namespace codec = ember::vision::codec;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr size_t kMaxBytes = size_t(1) << 24;
  for (int mode = 0; mode <= 4; ++mode) {
    codec::Image img;
    try {
      img = codec::decode_png(data, size, codec::Mode(mode), /*allow_16_bits=*/mode % 2 == 0,
                              kMaxBytes);
    } catch (const ember::Error&) {
      continue;
    }
    size_t expect =
        size_t(img.height) * size_t(img.width) * size_t(img.channels) * size_t(img.bit_depth / 8);
    if (img.pixels.size() != expect || img.channels < 1 || img.channels > 4) std::abort();
    if (mode != 0 && img.channels != mode) std::abort();
    if (img.bit_depth != 8 || img.height == 0 || img.width == 0) continue;
    std::vector<uint8_t> png =
        codec::encode_png(img.pixels.data(), img.height, img.width, img.channels, 1);
    codec::Image again = codec::decode_png(png.data(), png.size(), codec::Mode::Unchanged);
    if (again.pixels != img.pixels || again.channels != img.channels) std::abort();
  }
  return 0;
}
