// Locating the records of a torch.save archive (Note [PyTorch checkpoint layout]).
#include "serialize/pt_archive.h"

#include <algorithm>
#include <bit>
#include <vector>

#include "ember/error.h"

namespace ember::pt {

Archive::Archive(std::shared_ptr<const zip::Source> source, std::string where, std::string op)
    : zip_(std::move(source), std::move(where), std::move(op)) {
  const auto& entries = zip_.entries();
  EMBER_CHECK(!entries.empty(), "[", zip_.op(), "] ", zip_.where(),
              ": the zip archive is empty (not a torch.save checkpoint)");
  // torch's reader takes the folder of the first record; accept any one-level folder holding
  // data.pkl when the first record does not name it.
  const std::string& first = entries.front().name;
  size_t slash = first.find('/');
  prefix_ = slash == std::string::npos ? std::string() : first.substr(0, slash + 1);
  if (!zip_.find(prefix_ + "data.pkl")) {
    for (const auto& e : entries) {
      size_t s = e.name.find('/');
      if (s != std::string::npos && e.name.compare(s, std::string::npos, "/data.pkl") == 0) {
        prefix_ = e.name.substr(0, s + 1);
        break;
      }
    }
  }
  if (zip_.find(prefix_ + "constants.pkl") || !zip_.find(prefix_ + "data.pkl")) {
    bool torchscript = std::any_of(entries.begin(), entries.end(), [](const zip::Entry& e) {
      return e.name.find("/constants.pkl") != std::string::npos ||
             e.name.find("/code/") != std::string::npos;
    });
    if (torchscript)
      EMBER_THROW(NotImplementedError, "[", zip_.op(), "] ", zip_.where(),
                  " is a TorchScript archive (torch.jit.save); ember reads torch.save "
                  "checkpoints: in PyTorch, torch.save(model.state_dict(), path) and load that");
    EMBER_THROW(Error, "[", zip_.op(), "] ", zip_.where(),
                ": a zip archive without a data.pkl record is not a torch.save checkpoint");
  }
  if (const zip::Entry* bo = zip_.find(prefix_ + "byteorder")) {
    EMBER_CHECK(bo->size <= 16, "[", zip_.op(), "] ", zip_.where(), ": corrupt byteorder record");
    std::string order = zip_.read(*bo);
    EMBER_CHECK(order == "little" || order == "big", "[", zip_.op(), "] ", zip_.where(),
                ": unknown byte order '", order, "'");
    big_endian_ = order == "big";
  }
}

std::string Archive::read_record(std::string_view name) const {
  std::string full = prefix_ + std::string(name);
  const zip::Entry* e = zip_.find(full);
  EMBER_CHECK(e != nullptr, "[", zip_.op(), "] ", zip_.where(), ": the checkpoint has no record '",
              full, "'");
  return zip_.read(*e);
}

const zip::Entry& Archive::storage_entry(const std::string& key, uint64_t nbytes) const {
  const zip::Entry* e = zip_.find(prefix_ + "data/" + key);
  EMBER_CHECK(e != nullptr, "[", zip_.op(), "] ", zip_.where(), ": storage '", key,
              "' has no record ", prefix_, "data/", key, " (truncated or corrupt checkpoint)");
  EMBER_CHECK(e->size >= nbytes, "[", zip_.op(), "] ", zip_.where(), ": storage '", key, "' needs ",
              nbytes, " bytes but its record holds ", e->size);
  return *e;
}

void Archive::check_storage(const std::string& key, uint64_t nbytes) const {
  storage_entry(key, nbytes);
}

pickle::Result Archive::unpickle_weights_only() const {
  pickle::Result r = pickle::unpickle(pickle_bytes(), zip_.where(), zip_.op().c_str());
  for (const pickle::Object* s : r.storages)
    check_storage(s->storage->key, uint64_t(s->storage->numel) * elementSize(s->storage->dtype));
  return r;
}

void Archive::read_storage(const std::string& key, ScalarType dtype, int64_t numel,
                           void* dst) const {
  const size_t item = elementSize(dtype);
  const uint64_t nbytes = uint64_t(numel) * item;
  const zip::Entry& e = storage_entry(key, nbytes);
  if (e.size == nbytes) {
    zip_.extract(e, dst);
  } else {
    std::string all = zip_.read(e);
    std::copy_n(all.data(), nbytes, static_cast<char*>(dst));
  }
  if (big_endian_ != (std::endian::native == std::endian::big)) {
    // Swap each element (each part of a complex number).
    size_t w = isComplexType(dtype) ? item / 2 : item;
    auto* b = static_cast<uint8_t*>(dst);
    if (w > 1)
      for (uint64_t i = 0; i + w <= nbytes; i += w) std::reverse(b + i, b + i + w);
  }
}

bool is_legacy_pickle(const uint8_t* data, size_t size) {
  return size >= 2 && data[0] == 0x80 && data[1] <= 5 && !(size >= 9 && data[8] == '{');
}

std::string describe_magic(const uint8_t* data, size_t size) {
  if (zip::has_zip_magic(data, size)) return "a zip archive";
  // A safetensors header length can start with 0x80 too: test for it before the pickle opcode.
  if (size >= 9 && data[8] == '{') return "a safetensors file";
  if (is_legacy_pickle(data, size)) return "a legacy (pre-1.6) torch.save file";
  if (size == 0) return "an empty file";
  std::string hex = "bytes ";
  const char* digits = "0123456789abcdef";
  for (size_t k = 0; k < std::min<size_t>(size, 8); ++k) {
    hex += digits[data[k] >> 4];
    hex += digits[data[k] & 15];
    hex += ' ';
  }
  hex.pop_back();
  return hex;
}

}  // namespace ember::pt
