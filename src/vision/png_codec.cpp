// PNG decoding and encoding on bytes with libpng (see image_codec.h); the input is untrusted.
//
// Note [Codec error handling]
// libpng and libjpeg report errors by calling a handler that must not return; we longjmp back to
// a setjmp in a small "phase" function whose frame holds only trivially destructible locals, so
// no C++ destructor is skipped and no object is left indeterminate. The phase returns false with
// the library's message in the reader/writer struct; the C++ caller throws ember::Error, and the
// struct's destructor frees the library state on every path. Warnings are silent.
#include <png.h>

#include <bit>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>

#include "ember/error.h"
#include "vision/image_codec.h"

namespace ember::vision::codec {
namespace {

// RGB to gray uses the ITU-R 601 luma weights (0.2989, 0.587, 0.114), as torchvision's decoder
// and rgb_to_grayscale, not libpng's sRGB default (0.2126, 0.7152, 0.0722).
constexpr double kLumaRed = 0.2989;
constexpr double kLumaGreen = 0.587;

constexpr uint8_t kPngSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

struct PngReader {
  png_structp png = nullptr;
  png_infop info = nullptr;
  const uint8_t* data = nullptr;
  size_t size = 0;
  size_t pos = 0;
  char msg[256] = {};
  ~PngReader() {
    if (png != nullptr) png_destroy_read_struct(&png, info != nullptr ? &info : nullptr, nullptr);
  }
};

struct PngWriter {
  png_structp png = nullptr;
  png_infop info = nullptr;
  std::vector<uint8_t>* out = nullptr;
  char msg[256] = {};
  ~PngWriter() {
    if (png != nullptr) png_destroy_write_struct(&png, info != nullptr ? &info : nullptr);
  }
};

// What the decoder will produce, known after the header phase.
struct PngLayout {
  png_uint_32 width = 0, height = 0;
  int channels = 0, bit_depth = 0;
  size_t rowbytes = 0;
};

[[noreturn]] void on_read_error(png_structp png, png_const_charp msg) {
  auto* r = static_cast<PngReader*>(png_get_error_ptr(png));
  std::snprintf(r->msg, sizeof r->msg, "%s", msg);
  png_longjmp(png, 1);
}

[[noreturn]] void on_write_error(png_structp png, png_const_charp msg) {
  auto* w = static_cast<PngWriter*>(png_get_error_ptr(png));
  std::snprintf(w->msg, sizeof w->msg, "%s", msg);
  png_longjmp(png, 1);
}

void on_warning(png_structp, png_const_charp) {}

void read_bytes(png_structp png, png_bytep out, size_t n) {
  auto* r = static_cast<PngReader*>(png_get_io_ptr(png));
  if (n > r->size - r->pos) png_error(png, "image is incomplete or truncated");
  std::memcpy(out, r->data + r->pos, n);
  r->pos += n;
}

// std::vector may throw; a C++ exception must not cross libpng's C frames.
void write_bytes(png_structp png, png_bytep in, size_t n) {
  auto* w = static_cast<PngWriter*>(png_get_io_ptr(png));
  bool ok = true;
  try {
    w->out->insert(w->out->end(), in, in + n);
  } catch (...) {
    ok = false;
  }
  if (!ok) png_error(png, "out of memory while encoding");
}

void flush_bytes(png_structp) {}

// Phase 1 (Note [Codec error handling]): reads the header and sets the conversions for `mode`.
bool read_header(PngReader* r, int mode, bool allow_16_bits, PngLayout* out) {
  if (setjmp(png_jmpbuf(r->png))) return false;
  png_set_read_fn(r->png, r, read_bytes);
  png_read_info(r->png, r->info);
  png_uint_32 width = 0, height = 0;
  int bit_depth = 0, color_type = 0, interlace = 0;
  png_get_IHDR(r->png, r->info, &width, &height, &bit_depth, &color_type, &interlace, nullptr,
               nullptr);
  if (bit_depth > 8 && !allow_16_bits) {
    png_error(r->png, "at most 8-bit PNG images are supported (this one is 16-bit)");
  }
  bool color = (color_type & PNG_COLOR_MASK_COLOR) != 0;
  bool alpha = (color_type & PNG_COLOR_MASK_ALPHA) != 0;
  if (color_type == PNG_COLOR_TYPE_PALETTE) {
    png_set_palette_to_rgb(r->png);
    if (png_get_valid(r->png, r->info, PNG_INFO_tRNS)) {
      png_set_tRNS_to_alpha(r->png);
      alpha = true;
    }
  } else if (bit_depth < 8) {
    png_set_expand_gray_1_2_4_to_8(r->png);
  }
  if (bit_depth == 16 && std::endian::native == std::endian::little) png_set_swap(r->png);
  png_uint_32 filler = bit_depth == 16 ? 0xffff : 0xff;
  int channels = 0;
  switch (mode) {
    case int(Mode::Unchanged):
      channels = (color ? 3 : 1) + (alpha ? 1 : 0);
      break;
    case int(Mode::Gray):
      if (color) png_set_rgb_to_gray(r->png, 1, kLumaRed, kLumaGreen);
      if (alpha) png_set_strip_alpha(r->png);
      channels = 1;
      break;
    case int(Mode::GrayAlpha):
      if (color) png_set_rgb_to_gray(r->png, 1, kLumaRed, kLumaGreen);
      if (!alpha) png_set_add_alpha(r->png, filler, PNG_FILLER_AFTER);
      channels = 2;
      break;
    case int(Mode::RGB):
      if (!color) png_set_gray_to_rgb(r->png);
      if (alpha) png_set_strip_alpha(r->png);
      channels = 3;
      break;
    case int(Mode::RGBA):
      if (!color) png_set_gray_to_rgb(r->png);
      if (!alpha) png_set_add_alpha(r->png, filler, PNG_FILLER_AFTER);
      channels = 4;
      break;
    default:
      png_error(r->png, "unknown image read mode");
  }
  png_set_interlace_handling(r->png);
  png_read_update_info(r->png, r->info);
  out->width = width;
  out->height = height;
  out->channels = channels;
  out->bit_depth = bit_depth == 16 ? 16 : 8;
  out->rowbytes = png_get_rowbytes(r->png, r->info);
  return true;
}

// Phase 2: decodes all rows (every interlace pass) into `rows`.
bool read_pixels(PngReader* r, png_bytepp rows) {
  if (setjmp(png_jmpbuf(r->png))) return false;
  png_read_image(r->png, rows);
  return true;
}

bool write_image(PngWriter* w, png_uint_32 height, png_uint_32 width, int channels, int level,
                 png_bytepp rows) {
  if (setjmp(png_jmpbuf(w->png))) return false;
  static constexpr int kColorTypes[4] = {PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA,
                                         PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGB_ALPHA};
  png_set_write_fn(w->png, w, write_bytes, flush_bytes);
  png_set_compression_level(w->png, level);
  png_set_IHDR(w->png, w->info, width, height, 8, kColorTypes[channels - 1], PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(w->png, w->info);
  png_write_image(w->png, rows);
  png_write_end(w->png, nullptr);
  return true;
}

}  // namespace

bool is_png(const uint8_t* data, size_t size) {
  return size >= sizeof kPngSignature &&
         std::memcmp(data, kPngSignature, sizeof kPngSignature) == 0;
}

Image decode_png(const uint8_t* data, size_t size, Mode mode, bool allow_16_bits,
                 size_t max_bytes) {
  EMBER_CHECK(is_png(data, size), "[decode_png] content is not PNG (bad signature)");
  PngReader r;
  r.data = data;
  r.size = size;
  r.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &r, on_read_error, on_warning);
  EMBER_CHECK(r.png != nullptr, "[decode_png] libpng could not allocate its state");
  r.info = png_create_info_struct(r.png);
  EMBER_CHECK(r.info != nullptr, "[decode_png] libpng could not allocate its state");
  PngLayout layout;
  EMBER_CHECK(read_header(&r, int(mode), allow_16_bits, &layout), "[decode_png] ", r.msg);
  size_t bytes_per_sample = size_t(layout.bit_depth / 8);
  size_t row = size_t(layout.width) * size_t(layout.channels) * bytes_per_sample;
  EMBER_CHECK(row == layout.rowbytes, "[decode_png] unexpected row size ", layout.rowbytes,
              " (expected ", row, ")");
  EMBER_CHECK(layout.height == 0 || row <= max_bytes / layout.height, "[decode_png] a ",
              layout.height, "x", layout.width, "x", layout.channels,
              " image exceeds the limit of ", max_bytes, " decoded bytes");
  Image img;
  img.height = layout.height;
  img.width = layout.width;
  img.channels = layout.channels;
  img.bit_depth = layout.bit_depth;
  img.pixels.resize(row * layout.height);
  std::vector<png_bytep> rows(layout.height);
  for (png_uint_32 y = 0; y < layout.height; ++y) rows[y] = img.pixels.data() + size_t(y) * row;
  EMBER_CHECK(read_pixels(&r, rows.data()), "[decode_png] ", r.msg);
  return img;
}

std::vector<uint8_t> encode_png(const uint8_t* pixels, int64_t height, int64_t width, int channels,
                                int level) {
  EMBER_CHECK_VALUE(channels >= 1 && channels <= 4,
                    "[encode_png] the number of channels should be 1 to 4, got ", channels);
  EMBER_CHECK(level >= 0 && level <= 9,
              "[encode_png] compression level should be between 0 and "
              "9, got ",
              level);
  EMBER_CHECK(height > 0 && width > 0, "[encode_png] cannot encode an empty image of ", height, "x",
              width, " pixels");
  EMBER_CHECK(height <= PNG_UINT_31_MAX && width <= PNG_UINT_31_MAX, "[encode_png] a ", height, "x",
              width, " image is too large for PNG");
  std::vector<uint8_t> out;
  PngWriter w;
  w.out = &out;
  w.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &w, on_write_error, on_warning);
  EMBER_CHECK(w.png != nullptr, "[encode_png] libpng could not allocate its state");
  w.info = png_create_info_struct(w.png);
  EMBER_CHECK(w.info != nullptr, "[encode_png] libpng could not allocate its state");
  // Without this the default 1e6-pixel width/height limit also applies to writing.
  png_set_user_limits(w.png, PNG_UINT_31_MAX, PNG_UINT_31_MAX);
  size_t row = size_t(width) * size_t(channels);
  std::vector<png_bytep> rows(static_cast<size_t>(height));
  for (int64_t y = 0; y < height; ++y) rows[size_t(y)] = const_cast<uint8_t*>(pixels) + y * row;
  EMBER_CHECK(
      write_image(&w, png_uint_32(height), png_uint_32(width), channels, level, rows.data()),
      "[encode_png] ", w.msg);
  return out;
}

}  // namespace ember::vision::codec
