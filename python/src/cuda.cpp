// ember.cuda's C++ side: devices, streams, events, the caching allocator, pinned memory and
// CUDA Graphs (ember/cuda.h), as _C._cuda.
#include "pyember.h"

#include "ember/cuda.h"

namespace ember::python {

void init_cuda(py::module_& m) { (void)m.def_submodule("_cuda", "CUDA runtime"); }

}  // namespace ember::python
