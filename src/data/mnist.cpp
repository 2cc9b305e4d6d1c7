// read_idx and the MNIST-format datasets, on top of the byte-level parser in idx_format.cpp.
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/parallel_internal.h"
#include "data/idx_format.h"
#include "ember/data/mnist.h"
#include "ember/factory.h"
#include "ember/index_ops.h"

namespace ember::data {
namespace {

// A decompressed IDX file larger than this is refused (MNIST-style sets are far smaller).
constexpr size_t kMaxIdxBytes = size_t(16) << 30;

std::vector<uint8_t> read_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  EMBER_CHECK(f != nullptr, "[read_idx] cannot open ", path, ": ", std::strerror(errno));
  struct Closer {
    std::FILE* f;
    ~Closer() { std::fclose(f); }
  } closer{f};
  std::vector<uint8_t> out;
  struct stat st {};
  if (::fstat(fileno(f), &st) == 0 && st.st_size > 0) out.reserve(size_t(st.st_size));
  uint8_t buf[1 << 16];
  while (true) {
    size_t n = std::fread(buf, 1, sizeof buf, f);
    out.insert(out.end(), buf, buf + n);
    if (n < sizeof buf) break;
  }
  EMBER_CHECK(!std::ferror(f), "[read_idx] reading ", path, " failed");
  return out;
}

// The file's bytes, inflated when gzip-compressed.
std::vector<uint8_t> read_idx_bytes(const std::string& path) {
  std::vector<uint8_t> raw = read_file(path);
  if (idx::is_gzip(raw.data(), raw.size()))
    return idx::gunzip(raw.data(), raw.size(), path, kMaxIdxBytes);
  return raw;
}

ScalarType idx_dtype(uint8_t type) {
  switch (type) {
    case 0x08:
      return kByte;
    case 0x09:
      return kChar;
    case 0x0B:
      return kShort;
    case 0x0C:
      return kInt;
    case 0x0D:
      return kFloat;
    default:
      return kDouble;  // 0x0E; parse() accepts no other code
  }
}

bool exists(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0;
}

std::string find_file(const std::string& root, const std::string& name) {
  std::string base = root.empty() ? name : root + "/" + name;
  if (exists(base)) return base;
  if (exists(base + ".gz")) return base + ".gz";
  EMBER_THROW(Error, "[MNIST] cannot find ", base, " or ", base, ".gz");
}

}  // namespace

Tensor read_idx(const std::string& path) {
  std::vector<uint8_t> bytes = read_idx_bytes(path);
  idx::IdxHeader h = idx::parse(bytes.data(), bytes.size(), path);
  Tensor t = empty(h.dims, TensorOptions().dtype(idx_dtype(h.type)));
  idx::decode(h, bytes.data(), t.data_ptr());
  return t;
}

Example<> read_mnist(const std::string& root, bool train) {
  std::string prefix = train ? "train" : "t10k";
  std::string img_path = find_file(root, prefix + "-images-idx3-ubyte");
  std::string lbl_path = find_file(root, prefix + "-labels-idx1-ubyte");
  std::vector<uint8_t> img = read_idx_bytes(img_path);
  idx::IdxHeader ih = idx::parse(img.data(), img.size(), img_path);
  EMBER_CHECK(ih.type == 0x08 && ih.dims.size() == 3, "[MNIST] ", img_path,
              ": expected 3-D uint8 images, got ", ih.dims.size(), " dims of IDX type ",
              int(ih.type));
  std::vector<uint8_t> lbl = read_idx_bytes(lbl_path);
  idx::IdxHeader lh = idx::parse(lbl.data(), lbl.size(), lbl_path);
  EMBER_CHECK(lh.type == 0x08 && lh.dims.size() == 1, "[MNIST] ", lbl_path,
              ": expected 1-D uint8 labels, got ", lh.dims.size(), " dims of IDX type ",
              int(lh.type));
  EMBER_CHECK(ih.dims[0] == lh.dims[0], "[MNIST] ", img_path, " has ", ih.dims[0], " images but ",
              lbl_path, " has ", lh.dims[0], " labels");
  int64_t n = ih.dims[0], h = ih.dims[1], w = ih.dims[2];
  Example<> out;
  out.data = empty({n, 1, h, w}, TensorOptions().dtype(kFloat));
  out.target = empty({n}, TensorOptions().dtype(kLong));
  // Straight from the file bytes to float32 / 255, in parallel: no uint8 tensor in between. A
  // true division, not a multiply by 1/255, so every pixel equals libtorch's and torchvision's.
  const uint8_t* src = img.data() + ih.data_offset;
  float* dst = out.data.data_ptr<float>();
  parallel_for(0, n * h * w, 1 << 16, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) dst[i] = float(src[i]) / 255.0f;
  });
  const uint8_t* ls = lbl.data() + lh.data_offset;
  auto* lt = out.target.data_ptr<int64_t>();
  for (int64_t i = 0; i < n; ++i) lt[i] = ls[i];
  return out;
}

MNIST::MNIST(const std::string& root, Mode mode) : train_(mode == Mode::kTrain) {
  Example<> e = read_mnist(root, train_);
  images_ = std::move(e.data);
  targets_ = std::move(e.target);
}

Example<> MNIST::get(size_t index) {
  EMBER_CHECK_INDEX(index < size(), "[MNIST] index ", index, " is out of range for ", size(),
                    " samples");
  return {images_.select(0, int64_t(index)), targets_.select(0, int64_t(index))};
}

size_t MNIST::size() const { return size_t(images_.size(0)); }

Example<> MNIST::get_batch(const std::vector<size_t>& indices) {
  Tensor idx = empty({int64_t(indices.size())}, TensorOptions().dtype(kLong));
  auto* p = idx.data_ptr<int64_t>();
  for (size_t i = 0; i < indices.size(); ++i) {
    EMBER_CHECK_INDEX(indices[i] < size(), "[MNIST] index ", indices[i], " is out of range for ",
                      size(), " samples");
    p[i] = int64_t(indices[i]);
  }
  return {index_select(images_, 0, idx), index_select(targets_, 0, idx)};
}

}  // namespace ember::data
