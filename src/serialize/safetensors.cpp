// ember::save / ember::load for safetensors files (Note [safetensors layout]).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstring>

#include "ember/factory.h"
#include "ember/serialize.h"
#include "serialize/safetensors_format.h"

namespace ember {
namespace {

const char* st_dtype(ScalarType t, const std::string& name) {
  switch (t) {
    case kBool:
      return "BOOL";
    case kByte:
      return "U8";
    case kChar:
      return "I8";
    case kShort:
      return "I16";
    case kInt:
      return "I32";
    case kLong:
      return "I64";
    case kHalf:
      return "F16";
    case kBFloat16:
      return "BF16";
    case kFloat:
      return "F32";
    case kDouble:
      return "F64";
    case kComplexFloat:
      return "C64";
    case kComplexDouble:
      return "C128";
    case kComplexHalf:
    case ScalarType::Undefined:
      break;
  }
  EMBER_THROW(TypeError, "[save] tensor '", name, "' has dtype ", dtype_name(t),
              ", which safetensors cannot store");
}

ScalarType from_st_dtype(const std::string& d) {
  if (d == "BOOL") return kBool;
  if (d == "U8") return kByte;
  if (d == "I8") return kChar;
  if (d == "I16") return kShort;
  if (d == "I32") return kInt;
  if (d == "I64") return kLong;
  if (d == "F16") return kHalf;
  if (d == "BF16") return kBFloat16;
  if (d == "F32") return kFloat;
  if (d == "F64") return kDouble;
  if (d == "C64") return kComplexFloat;
  return kComplexDouble;  // "C128": parse_header accepts no other name
}

// safetensors is little-endian; on a big-endian host swap each element's bytes (complex: each
// part).
void to_little_endian(void* p, size_t nbytes, size_t itemsize, bool complex) {
  if constexpr (std::endian::native == std::endian::little) {
    (void)p, (void)nbytes, (void)itemsize, (void)complex;
  } else {
    size_t w = complex ? itemsize / 2 : itemsize;
    auto* b = static_cast<uint8_t*>(p);
    for (size_t i = 0; i + w <= nbytes; i += w) std::reverse(b + i, b + i + w);
  }
}

std::string errno_text() { return std::strerror(errno); }

// Owns a file descriptor; closes it on scope exit.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

void write_all(int fd, const void* data, size_t n, const std::string& tmp) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::write(fd, p, std::min<size_t>(n, size_t(1) << 30));
    if (w < 0 && errno == EINTR) continue;
    EMBER_CHECK(w > 0, "[save] writing ", tmp, " failed: ", errno_text());
    p += w;
    n -= size_t(w);
  }
}

void read_all(int fd, void* data, size_t n, uint64_t offset, const std::string& path) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    ssize_t r = ::pread(fd, p, std::min<size_t>(n, size_t(1) << 30), off_t(offset));
    if (r < 0 && errno == EINTR) continue;
    EMBER_CHECK(r >= 0, "[load] ", path, ": read failed: ", errno_text());
    EMBER_CHECK(r > 0, "[load] ", path, ": file ended early (was it changed while reading?)");
    p += r;
    n -= size_t(r);
    offset += uint64_t(r);
  }
}

struct OpenedFile {
  Fd fd;
  safetensors::Header header;
};

// Opens `path` and parses its validated header.
void open_and_parse(const std::string& path, OpenedFile& f) {
  f.fd.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  EMBER_CHECK(f.fd.fd >= 0, "[load] cannot open ", path, ": ", errno_text());
  struct stat st {};
  EMBER_CHECK(::fstat(f.fd.fd, &st) == 0, "[load] ", path, ": stat failed: ", errno_text());
  EMBER_CHECK(S_ISREG(st.st_mode), "[load] ", path, " is not a regular file");
  auto file_size = uint64_t(st.st_size);
  uint8_t prefix[8] = {};
  if (file_size >= 8) read_all(f.fd.fd, prefix, 8, 0, path);
  uint64_t n = safetensors::parse_header_length(prefix, file_size, path);
  std::string json(size_t(n), '\0');
  read_all(f.fd.fd, json.data(), json.size(), 8, path);
  f.header = safetensors::parse_header(json, file_size, path);
}

}  // namespace

void save(const OrderedDict<std::string, Tensor>& tensors, const std::string& path,
          const std::map<std::string, std::string>& metadata) {
  // Validate and lay out everything before touching the file system.
  std::vector<Tensor> data;
  std::vector<safetensors::Entry> entries;
  uint64_t offset = 0;
  for (const auto& item : tensors) {
    EMBER_CHECK(item.key() != "__metadata__",
                "[save] '__metadata__' is reserved by safetensors and cannot name a tensor");
    const Tensor& t = item.value();
    EMBER_CHECK(t.defined(), "[save] tensor '", item.key(), "' is undefined");
    safetensors::Entry e;
    e.name = item.key();
    e.dtype = st_dtype(t.dtype(), item.key());
    e.shape.assign(t.sizes().begin(), t.sizes().end());
    e.begin = offset;
    offset += t.nbytes();
    e.end = offset;
    entries.push_back(std::move(e));
    data.push_back(t.detach().cpu().resolve_conj().contiguous());
  }
  std::string header = safetensors::build_header(
      entries, std::vector<std::pair<std::string, std::string>>(metadata.begin(), metadata.end()));
  EMBER_CHECK(header.size() - 8 <= safetensors::kMaxHeaderBytes, "[save] ", path,
              ": the header would be ", header.size() - 8, " bytes, more than safetensors allows");

  // Note [Atomic save]: a reader never sees a half-written file under `path`; a crash leaves at
  // most "<path>.tmp.<pid>" behind, and any error removes it.
  static std::atomic<unsigned> counter{0};
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  unsigned k = counter++;
  if (k) tmp += "." + std::to_string(k);
  Fd fd;
  fd.fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  EMBER_CHECK(fd.fd >= 0, "[save] cannot create ", tmp, ": ", errno_text());
  try {
    write_all(fd.fd, header.data(), header.size(), tmp);
    std::vector<uint8_t> swapped;
    for (const Tensor& t : data) {
      const void* p = t.data_ptr();
      if constexpr (std::endian::native != std::endian::little) {
        const auto* b = static_cast<const uint8_t*>(p);
        swapped.assign(b, b + t.nbytes());
        to_little_endian(swapped.data(), swapped.size(), t.itemsize(), t.is_complex());
        p = swapped.data();
      }
      write_all(fd.fd, p, t.nbytes(), tmp);
    }
    EMBER_CHECK(::fsync(fd.fd) == 0, "[save] fsync of ", tmp, " failed: ", errno_text());
    int rc = ::close(fd.fd);
    fd.fd = -1;
    EMBER_CHECK(rc == 0, "[save] closing ", tmp, " failed: ", errno_text());
    EMBER_CHECK(std::rename(tmp.c_str(), path.c_str()) == 0, "[save] cannot rename ", tmp, " to ",
                path, ": ", errno_text());
  } catch (...) {
    if (fd.fd >= 0) ::close(fd.fd);
    fd.fd = -1;
    ::unlink(tmp.c_str());
    throw;
  }
}

void save(const Tensor& tensor, const std::string& path) {
  OrderedDict<std::string, Tensor> d;
  d.insert("0", tensor);
  save(d, path);
}

void save(const std::vector<Tensor>& tensors, const std::string& path) {
  OrderedDict<std::string, Tensor> d;
  for (size_t i = 0; i < tensors.size(); ++i) d.insert(std::to_string(i), tensors[i]);
  save(d, path);
}

OrderedDict<std::string, Tensor> load_dict(const std::string& path,
                                           std::map<std::string, std::string>* metadata) {
  OpenedFile f;
  open_and_parse(path, f);
  OrderedDict<std::string, Tensor> out;
  for (const auto& e : f.header.entries) {
    ScalarType dt = from_st_dtype(e.dtype);
    Tensor t = empty(e.shape, TensorOptions().dtype(dt));
    read_all(f.fd.fd, t.data_ptr(), t.nbytes(), f.header.data_start + e.begin, path);
    to_little_endian(t.data_ptr(), t.nbytes(), t.itemsize(), t.is_complex());
    out.insert(e.name, std::move(t));
  }
  if (metadata) metadata->clear();
  if (metadata)
    for (auto& kv : f.header.metadata) metadata->insert(kv);
  return out;
}

void load(Tensor& tensor, const std::string& path) {
  auto d = load_dict(path);
  EMBER_CHECK(d.size() == 1, "[load] ", path, ": expected one tensor, found ", d.size());
  tensor = d[size_t(0)].value();
}

void load(std::vector<Tensor>& tensors, const std::string& path) {
  auto d = load_dict(path);
  std::vector<Tensor> out(d.size());
  for (size_t i = 0; i < out.size(); ++i) {
    const Tensor* t = d.find(std::to_string(i));
    EMBER_CHECK(t != nullptr, "[load] ", path, ": expected the keys \"0\"..\"", d.size() - 1,
                "\" of a saved tensor list; \"", i, "\" is missing");
    out[i] = *t;
  }
  tensors = std::move(out);
}

std::map<std::string, std::string> safetensors_metadata(const std::string& path) {
  OpenedFile f;
  open_and_parse(path, f);
  return {f.header.metadata.begin(), f.header.metadata.end()};
}

}  // namespace ember
