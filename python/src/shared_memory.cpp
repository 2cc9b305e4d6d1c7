// Bindings: see init_shared_memory in pyember.h.
#include "pyember.h"

namespace ember::python {

void init_shared_memory(py::module_& m) { (void)m; }

}  // namespace ember::python
