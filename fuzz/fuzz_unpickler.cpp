// libFuzzer target: the restricted unpickler and the checkpoint archive reader on arbitrary
// bytes. Input starting with "PK\3\4" goes through the whole archive path (zip directory,
// data.pkl, storage records, inflate and CRC); anything else is fed to the unpickler directly.
// Invalid input must throw ember::Error; the invariants below must hold for valid input.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "ember/error.h"
#include "serialize/pt_archive.h"

namespace pk = ember::pickle;

namespace {

void check_graph(const pk::Result& r) {
  for (const auto& o : r.arena) {
    if (o->kind == pk::Kind::Dict && o->items.size() % 2) std::abort();
    if (o->kind == pk::Kind::Tensor) {
      const pk::TensorInfo& t = *o->tensor;
      if (!t.storage || t.storage->kind != pk::Kind::Storage) std::abort();
      if (t.sizes.size() != t.strides.size() || t.offset < 0) std::abort();
      // Every element must lie inside the storage: recompute the extent independently.
      __int128 last = t.offset;
      bool empty = false;
      for (size_t d = 0; d < t.sizes.size(); ++d) {
        if (t.sizes[d] < 0 || t.strides[d] < 0) std::abort();
        if (t.sizes[d] == 0) empty = true;
        last += __int128(t.sizes[d] - 1) * t.strides[d];
      }
      if (!empty && last >= t.storage->storage->numel) std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    if (ember::zip::has_zip_magic(data, size)) {
      auto src = std::make_shared<ember::zip::MemorySource>(data, size);
      ember::pt::Archive archive(src, "fuzz-input");
      pk::Result r = archive.unpickle_weights_only();
      check_graph(r);
      for (const pk::Object* s : r.storages) {
        const pk::StorageInfo& st = *s->storage;
        std::vector<uint8_t> buf(size_t(st.numel) * ember::elementSize(st.dtype));
        // unpickle_weights_only bounded this by the record, itself bounded by the input.
        if (buf.size() > size * 1032 + 64) std::abort();
        archive.read_storage(st.key, st.dtype, st.numel, buf.data());
      }
    } else {
      pk::Result r =
          pk::unpickle(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz-input");
      check_graph(r);
    }
  } catch (const ember::InternalError&) {
    std::abort();  // our own invariant broke
  } catch (const ember::Error&) {
  }
  return 0;
}
