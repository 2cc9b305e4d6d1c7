// torchvision.io on tensors (include/ember/vision.h) over the byte-level codecs.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "ember/factory.h"
#include "ember/vision.h"
#include "vision/image_codec.h"

namespace ember::vision {
namespace {

std::string errno_text() { return std::strerror(errno); }

// The codecs throw plain ember::Error (they know no Tensor); re-type them as ImageError.
template <class F>
auto as_image_error(F&& f) {
  try {
    return f();
  } catch (const ValueError&) {
    throw;
  } catch (const ImageError&) {
    throw;
  } catch (const Error& e) {
    throw ImageError(e.what());
  }
}

// The encoded bytes as a contiguous CPU uint8 tensor (torchvision's checks and wording).
Tensor check_bytes(const Tensor& data, const char* op) {
  EMBER_CHECK(data.defined(), "[", op, "] expected a tensor of bytes, got an undefined tensor");
  EMBER_CHECK(data.scalar_type() == kByte, "[", op, "] expected a torch.uint8 tensor, got ",
              dtype_name(data.scalar_type()));
  EMBER_CHECK(data.dim() == 1 && data.numel() > 0, "[", op,
              "] expected a non empty 1-dimensional tensor, got shape ", data.sizes());
  return data.cpu().contiguous();
}

// The image as contiguous H×W×C bytes for the encoders.
Tensor check_image(const Tensor& image, const char* op) {
  EMBER_CHECK(image.defined(), "[", op, "] expected an image tensor, got an undefined tensor");
  EMBER_CHECK(image.scalar_type() == kByte, "[", op, "] input tensor dtype should be uint8, got ",
              dtype_name(image.scalar_type()));
  EMBER_CHECK(image.dim() == 3, "[", op,
              "] input data should be a 3-dimensional C×H×W tensor, "
              "got shape ",
              image.sizes());
  return image.cpu().permute({1, 2, 0}).contiguous();
}

Tensor bytes_tensor(const std::vector<uint8_t>& bytes) {
  Tensor out = empty({int64_t(bytes.size())}, TensorOptions().dtype(kByte));
  if (!bytes.empty()) std::memcpy(out.data_ptr(), bytes.data(), bytes.size());
  return out;
}

// Interleaved H×W×C samples to a C×H×W tensor (uint8, or int32 for 16-bit samples).
Tensor to_chw(const codec::Image& img) {
  int64_t h = img.height, w = img.width, c = img.channels;
  bool wide = img.bit_depth == 16;
  Tensor out = empty({c, h, w}, TensorOptions().dtype(wide ? kInt : kByte));
  int64_t plane = h * w;
  if (wide) {
    auto* dst = out.data_ptr<int32_t>();
    const auto* src = reinterpret_cast<const uint16_t*>(img.pixels.data());
    for (int64_t p = 0; p < plane; ++p)
      for (int64_t k = 0; k < c; ++k) dst[k * plane + p] = src[p * c + k];
  } else {
    auto* dst = out.data_ptr<uint8_t>();
    const uint8_t* src = img.pixels.data();
    if (c == 1) {
      std::memcpy(dst, src, size_t(plane));
    } else {
      for (int64_t p = 0; p < plane; ++p)
        for (int64_t k = 0; k < c; ++k) dst[k * plane + p] = src[p * c + k];
    }
  }
  return out;
}

codec::Mode to_codec(ImageReadMode mode, const char* op) {
  int m = int(mode);
  EMBER_CHECK_VALUE(m >= 0 && m <= 4, "[", op, "] unknown ImageReadMode ", m);
  return codec::Mode(m);
}

}  // namespace

Tensor read_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  EMBER_CHECK(fd >= 0, "[read_file] cannot open ", path, ": ", errno_text());
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  EMBER_CHECK(::fstat(fd, &st) == 0, "[read_file] cannot stat ", path, ": ", errno_text());
  EMBER_CHECK(!S_ISDIR(st.st_mode), "[read_file] ", path, " is a directory");
  std::vector<uint8_t> bytes;
  if (st.st_size > 0) bytes.reserve(size_t(st.st_size));
  uint8_t buf[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    EMBER_CHECK(n >= 0, "[read_file] reading ", path, " failed: ", errno_text());
    if (n == 0) break;
    bytes.insert(bytes.end(), buf, buf + n);
  }
  return bytes_tensor(bytes);
}

void write_file(const std::string& path, const Tensor& data) {
  EMBER_CHECK(data.defined() && data.scalar_type() == kByte && data.dim() == 1, "[write_file] ",
              "expected a 1-D uint8 tensor of bytes, got ",
              data.defined() ? dtype_name(data.scalar_type()) : "undefined", " of shape ",
              data.defined() ? data.sizes() : IntArrayRef{});
  Tensor bytes = data.cpu().contiguous();
  static std::atomic<unsigned> counter{0};
  std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  EMBER_CHECK(fd >= 0, "[write_file] cannot create ", tmp, ": ", errno_text());
  const auto* p = static_cast<const uint8_t*>(bytes.data_ptr());
  size_t left = size_t(bytes.numel());
  std::string failure;
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      failure = "writing " + tmp + " failed: " + errno_text();
      break;
    }
    p += n;
    left -= size_t(n);
  }
  if (::close(fd) != 0 && failure.empty()) failure = "closing " + tmp + " failed: " + errno_text();
  if (failure.empty() && std::rename(tmp.c_str(), path.c_str()) != 0)
    failure = "cannot rename " + tmp + " to " + path + ": " + errno_text();
  if (!failure.empty()) {
    ::unlink(tmp.c_str());
    EMBER_THROW(Error, "[write_file] ", failure);
  }
}

Tensor decode_png(const Tensor& data, ImageReadMode mode, bool allow_16_bits) {
  Tensor bytes = check_bytes(data, "decode_png");
  codec::Mode m = to_codec(mode, "decode_png");
  return as_image_error([&] {
    auto img = codec::decode_png(static_cast<const uint8_t*>(bytes.data_ptr()),
                                 size_t(bytes.numel()), m, allow_16_bits);
    return to_chw(img);
  });
}

Tensor decode_jpeg(const Tensor& data, ImageReadMode mode) {
  Tensor bytes = check_bytes(data, "decode_jpeg");
  codec::Mode m = to_codec(mode, "decode_jpeg");
  return as_image_error([&] {
    auto img =
        codec::decode_jpeg(static_cast<const uint8_t*>(bytes.data_ptr()), size_t(bytes.numel()), m);
    return to_chw(img);
  });
}

Tensor decode_image(const Tensor& data, ImageReadMode mode) {
  Tensor bytes = check_bytes(data, "decode_image");
  const auto* p = static_cast<const uint8_t*>(bytes.data_ptr());
  size_t n = size_t(bytes.numel());
  if (codec::is_jpeg(p, n)) return decode_jpeg(bytes, mode);
  if (codec::is_png(p, n)) return decode_png(bytes, mode);
  EMBER_THROW(ImageError,
              "[decode_image] unsupported image file: only JPEG and PNG are supported (the "
              "bytes start with neither signature)");
}

Tensor read_image(const std::string& path, ImageReadMode mode) {
  return decode_image(read_file(path), mode);
}

Tensor encode_png(const Tensor& image, int64_t compression_level) {
  Tensor hwc = check_image(image, "encode_png");
  EMBER_CHECK(compression_level >= 0 && compression_level <= 9,
              "[encode_png] compression level should be between 0 and 9, got ", compression_level);
  int64_t c = hwc.size(2);
  EMBER_CHECK(c >= 1 && c <= 4, "[encode_png] the number of channels should be 1 to 4, got ", c);
  return as_image_error([&] {
    return bytes_tensor(codec::encode_png(static_cast<const uint8_t*>(hwc.data_ptr()), hwc.size(0),
                                          hwc.size(1), int(c), int(compression_level)));
  });
}

Tensor encode_jpeg(const Tensor& image, int64_t quality) {
  Tensor hwc = check_image(image, "encode_jpeg");
  EMBER_CHECK_VALUE(quality >= 1 && quality <= 100,
                    "[encode_jpeg] image quality should be a number between 1 and 100, got ",
                    quality);
  int64_t c = hwc.size(2);
  EMBER_CHECK(c == 1 || c == 3, "[encode_jpeg] the number of channels should be 1 or 3, got ", c);
  return as_image_error([&] {
    return bytes_tensor(codec::encode_jpeg(static_cast<const uint8_t*>(hwc.data_ptr()), hwc.size(0),
                                           hwc.size(1), int(c), int(quality)));
  });
}

void write_png(const Tensor& image, const std::string& path, int64_t compression_level) {
  write_file(path, encode_png(image, compression_level));
}

void write_jpeg(const Tensor& image, const std::string& path, int64_t quality) {
  write_file(path, encode_jpeg(image, quality));
}

}  // namespace ember::vision
