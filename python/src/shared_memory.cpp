// Bindings: see init_shared_memory in pyember.h. Tensor.share_memory_/is_shared and the
// ember._C._shm helpers that ember.multiprocessing's reducers use.
#include "ember/shared_memory.h"

#include "pyember.h"

namespace ember::python {

namespace {

// (fd, nbytes, dev, inode) of a tensor's shared storage; the fd stays owned by the storage.
py::tuple handle_tuple(const Tensor& t) {
  shm::Handle h = shm::handle(t.storage());
  return py::make_tuple(h.fd, h.nbytes, h.dev, h.inode);
}

}  // namespace

void init_shared_memory(py::module_& m) {
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  cls.def(
      "share_memory_",
      [](py::object self) {
        const Tensor& t = unwrap(self.ptr());
        {
          py::gil_scoped_release nogil;
          share_memory_(t);
        }
        return self;
      },
      "Moves the underlying storage to shared memory (no-op if already there); returns self.");
  cls.def(
      "is_shared", [](const Tensor& t) { return is_shared(t); },
      "Whether the tensor's storage is in shared memory.");

  auto s = m.def_submodule("_shm", "shared-memory storages (ember.multiprocessing)");
  s.def(
      "share_memory_",
      [](const Tensor& t) {
        py::gil_scoped_release nogil;
        share_memory_(t);
      },
      py::arg("tensor"), "Moves the tensor's storage to shared memory in place.");
  s.def(
      "is_shared", [](const Tensor& t) { return is_shared(t); }, py::arg("tensor"),
      "Whether the tensor's storage is in shared memory.");
  s.def("handle", &handle_tuple, py::arg("tensor"),
        "(fd, nbytes, dev, inode) of the tensor's shared storage; the fd belongs to the storage "
        "(dup it to hand it on). Error when the storage is not shared.");
  s.def(
      "storage_nbytes", [](const Tensor& t) { return t.storage().nbytes(); }, py::arg("tensor"),
      "Size in bytes of the tensor's storage.");
  s.def(
      "rebuild",
      [](int fd, size_t nbytes, ScalarType dtype, std::vector<int64_t> sizes,
         std::vector<int64_t> strides, int64_t storage_offset) {
        Storage st = shm::storage_from_fd(fd, nbytes);
        return shm::tensor_from_storage(st, dtype, sizes, strides, storage_offset);
      },
      py::arg("fd"), py::arg("nbytes"), py::arg("dtype"), py::arg("sizes"), py::arg("strides"),
      py::arg("storage_offset"),
      "A tensor over the shared storage behind received descriptor `fd` (not taken: the caller "
      "closes it); the storage already mapped here is reused when the same block arrives again.");
  s.def(
      "empty",
      [](std::vector<int64_t> sizes, ScalarType dtype) {
        int64_t numel = 1;
        for (int64_t d : sizes) {
          EMBER_CHECK_VALUE(d >= 0, "[_shm.empty] negative size in ", IntArrayRef(sizes));
          EMBER_CHECK(!__builtin_mul_overflow(numel, d, &numel), "[_shm.empty] sizes overflow");
        }
        Storage st = shm::allocate(size_t(numel) * elementSize(dtype));
        return shm::tensor_from_storage(st, dtype, sizes, contiguous_strides(sizes), 0);
      },
      py::arg("sizes"), py::arg("dtype"), "A zeroed contiguous tensor in shared memory.");
  s.def("cached_storage_count", &shm::cached_storage_count,
        "How many shared storages this process remembers for rebuilds (after dropping unused).");
}

}  // namespace ember::python
