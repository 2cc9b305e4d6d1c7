// libFuzzer target: the JPEG decoder on arbitrary bytes in every read mode. Bad input must throw
// ember::Error; a decoded image must have the size its layout promises and survive an encode
// and decode of the same size.
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
      img = codec::decode_jpeg(data, size, codec::Mode(mode), kMaxBytes);
    } catch (const ember::Error&) {
      continue;
    }
    if (mode == 2 || mode == 4) std::abort();  // alpha modes must be refused
    size_t expect = size_t(img.height) * size_t(img.width) * size_t(img.channels);
    if (img.pixels.size() != expect || img.bit_depth != 8) std::abort();
    if (mode != 0 && img.channels != mode) std::abort();
    if (img.channels != 1 && img.channels != 3) continue;
    if (img.height * img.width > 4096 * 4) continue;  // keep each input fast
    std::vector<uint8_t> jpg =
        codec::encode_jpeg(img.pixels.data(), img.height, img.width, img.channels, 90);
    codec::Image again = codec::decode_jpeg(jpg.data(), jpg.size(), codec::Mode::Unchanged);
    if (again.height != img.height || again.width != img.width || again.channels != img.channels)
      std::abort();
  }
  return 0;
}
