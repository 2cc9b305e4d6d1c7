// JPEG decoding and encoding on bytes with libjpeg(-turbo) (see image_codec.h). Errors longjmp
// back to the phase functions as in Note [Codec error handling] (png_codec.cpp): libjpeg's
// default error_exit would call exit().
#include <cstdio>
// jpeglib.h needs size_t and FILE declared first.
#include <jerror.h>
#include <jpeglib.h>

#include <csetjmp>
#include <cstdlib>
#include <cstring>
#include <string>

#include "ember/error.h"
#include "vision/image_codec.h"

namespace ember::vision::codec {
namespace {

// Progressive files can carry thousands of tiny scans that make decoding quadratic; real
// encoders emit a few dozen at most.
constexpr int kMaxScans = 1000;

struct ErrorManager {
  jpeg_error_mgr pub;
  jmp_buf jump;
  char msg[JMSG_LENGTH_MAX + 64];
};

[[noreturn]] void on_error(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
  char buf[JMSG_LENGTH_MAX] = {};
  (*cinfo->err->format_message)(cinfo, buf);
  std::snprintf(err->msg, sizeof err->msg, "%s", buf);
  std::longjmp(err->jump, 1);
}

// Warnings are silent except running out of data: libjpeg would pad the image with grey.
void on_message(j_common_ptr cinfo, int level) {
  auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
  if (level == -1 && cinfo->err->msg_code == JWRN_JPEG_EOF) {
    std::snprintf(err->msg, sizeof err->msg, "image is incomplete or truncated");
    std::longjmp(err->jump, 1);
  }
}

void on_output(j_common_ptr) {}

void on_progress(j_common_ptr cinfo) {
  if (!cinfo->is_decompressor) return;
  auto* d = reinterpret_cast<j_decompress_ptr>(cinfo);
  if (d->input_scan_number > kMaxScans) {
    auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
    std::snprintf(err->msg, sizeof err->msg, "more than %d progressive scans", kMaxScans);
    std::longjmp(err->jump, 1);
  }
}

void install(ErrorManager* err, j_common_ptr cinfo) {
  cinfo->err = jpeg_std_error(&err->pub);
  err->pub.error_exit = on_error;
  err->pub.emit_message = on_message;
  err->pub.output_message = on_output;
}

struct JpegReader {
  jpeg_decompress_struct cinfo;
  ErrorManager err;
  jpeg_progress_mgr progress;
  bool created = false;
  JpegReader() {
    std::memset(&cinfo, 0, sizeof cinfo);
    std::memset(&progress, 0, sizeof progress);
    install(&err, reinterpret_cast<j_common_ptr>(&cinfo));
    err.msg[0] = '\0';
    progress.progress_monitor = on_progress;
  }
  ~JpegReader() {
    if (created) jpeg_destroy_decompress(&cinfo);
  }
};

struct JpegWriter {
  jpeg_compress_struct cinfo;
  ErrorManager err;
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  bool created = false;
  JpegWriter() {
    std::memset(&cinfo, 0, sizeof cinfo);
    install(&err, reinterpret_cast<j_common_ptr>(&cinfo));
    err.msg[0] = '\0';
  }
  ~JpegWriter() {
    if (created) jpeg_destroy_compress(&cinfo);
    std::free(buffer);  // jpeg_mem_dest allocates with malloc
  }
};

// Phase 1 (Note [Codec error handling]): the header; the caller checks the size.
bool read_header(JpegReader* r, const uint8_t* data, size_t size) {
  if (setjmp(r->err.jump)) return false;
  jpeg_create_decompress(&r->cinfo);
  r->created = true;
  r->cinfo.progress = &r->progress;
  jpeg_mem_src(&r->cinfo, data, static_cast<unsigned long>(size));
  jpeg_read_header(&r->cinfo, TRUE);
  return true;
}

// Phase 2: picks the output colour space and decodes every row into `out`.
bool read_pixels(JpegReader* r, J_COLOR_SPACE space, bool set_space, uint8_t* out, size_t row_bytes,
                 int* channels) {
  if (setjmp(r->err.jump)) return false;
  if (set_space) r->cinfo.out_color_space = space;
  jpeg_start_decompress(&r->cinfo);
  *channels = r->cinfo.output_components;
  if (size_t(r->cinfo.output_width) * size_t(*channels) != row_bytes) return true;
  while (r->cinfo.output_scanline < r->cinfo.output_height) {
    JSAMPROW row = out + size_t(r->cinfo.output_scanline) * row_bytes;
    jpeg_read_scanlines(&r->cinfo, &row, 1);
  }
  return true;
}

bool write_image(JpegWriter* w, const uint8_t* pixels, JDIMENSION height, JDIMENSION width,
                 int channels, int quality) {
  if (setjmp(w->err.jump)) return false;
  jpeg_create_compress(&w->cinfo);
  w->created = true;
  jpeg_mem_dest(&w->cinfo, &w->buffer, &w->size);
  w->cinfo.image_width = width;
  w->cinfo.image_height = height;
  w->cinfo.input_components = channels;
  w->cinfo.in_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&w->cinfo);
  jpeg_set_quality(&w->cinfo, quality, TRUE);
  jpeg_start_compress(&w->cinfo, TRUE);
  size_t row_bytes = size_t(width) * size_t(channels);
  while (w->cinfo.next_scanline < w->cinfo.image_height) {
    JSAMPROW row = const_cast<uint8_t*>(pixels) + size_t(w->cinfo.next_scanline) * row_bytes;
    jpeg_write_scanlines(&w->cinfo, &row, 1);
  }
  jpeg_finish_compress(&w->cinfo);
  return true;
}

const char* mode_name(Mode mode) {
  switch (mode) {
    case Mode::Unchanged:
      return "UNCHANGED";
    case Mode::Gray:
      return "GRAY";
    case Mode::GrayAlpha:
      return "GRAY_ALPHA";
    case Mode::RGB:
      return "RGB";
    case Mode::RGBA:
      return "RGB_ALPHA";
  }
  return "?";
}

}  // namespace

bool is_jpeg(const uint8_t* data, size_t size) {
  return size >= 3 && data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF;
}

Image decode_jpeg(const uint8_t* data, size_t size, Mode mode, size_t max_bytes) {
  EMBER_CHECK(mode == Mode::Unchanged || mode == Mode::Gray || mode == Mode::RGB,
              "[decode_jpeg] the provided mode ", mode_name(mode),
              " is not supported for JPEG files (use UNCHANGED, GRAY or RGB)");
  EMBER_CHECK(size >= 2 && data[0] == 0xFF && data[1] == 0xD8, "[decode_jpeg] not a JPEG file",
              size >= 2 ? " (bad start-of-image marker)" : " (fewer than 2 bytes)");
  JpegReader r;
  EMBER_CHECK(read_header(&r, data, size), "[decode_jpeg] ", r.err.msg);
  int components = r.cinfo.num_components;
  int channels = mode == Mode::Gray ? 1 : mode == Mode::RGB ? 3 : components;
  // Bound the decoder's own buffers (coefficients of progressive files) as well as ours.
  size_t w = r.cinfo.image_width, h = r.cinfo.image_height;
  size_t per_row = w * size_t(components > channels ? components : channels);
  EMBER_CHECK(h == 0 || per_row <= max_bytes / h, "[decode_jpeg] a ", h, "x", w, "x", channels,
              " image exceeds the limit of ", max_bytes, " decoded bytes");
  Image img;
  img.height = int64_t(h);
  img.width = int64_t(w);
  img.channels = channels;
  size_t row_bytes = w * size_t(channels);
  img.pixels.resize(row_bytes * h);
  J_COLOR_SPACE space = mode == Mode::Gray ? JCS_GRAYSCALE : JCS_RGB;
  int got = 0;
  EMBER_CHECK(read_pixels(&r, space, mode != Mode::Unchanged, img.pixels.data(), row_bytes, &got),
              "[decode_jpeg] ", r.err.msg);
  // Scaling is off, so the output keeps the header's size; only the component count can differ
  // (e.g. an unusual colour space left as is), and then nothing was written.
  EMBER_CHECK(
      got == channels && size_t(r.cinfo.output_width) == w && size_t(r.cinfo.output_height) == h,
      "[decode_jpeg] unsupported JPEG colour layout (", components, " components decode to ", got,
      " channels)");
  return img;
}

std::vector<uint8_t> encode_jpeg(const uint8_t* pixels, int64_t height, int64_t width, int channels,
                                 int quality) {
  EMBER_CHECK(channels == 1 || channels == 3,
              "[encode_jpeg] the number of channels should be 1 or 3, got ", channels);
  EMBER_CHECK_VALUE(quality >= 1 && quality <= 100,
                    "[encode_jpeg] image quality should be a number between 1 and 100, got ",
                    quality);
  EMBER_CHECK(height > 0 && width > 0, "[encode_jpeg] cannot encode an empty image of ", height,
              "x", width, " pixels");
  EMBER_CHECK(height <= JPEG_MAX_DIMENSION && width <= JPEG_MAX_DIMENSION, "[encode_jpeg] a ",
              height, "x", width, " image exceeds JPEG's limit of ", JPEG_MAX_DIMENSION,
              " pixels a side");
  JpegWriter w;
  EMBER_CHECK(write_image(&w, pixels, JDIMENSION(height), JDIMENSION(width), channels, quality),
              "[encode_jpeg] ", w.err.msg);
  return std::vector<uint8_t>(w.buffer, w.buffer + w.size);
}

}  // namespace ember::vision::codec
