// Bindings: see init_vision in pyember.h.
#include "pyember.h"

namespace ember::python {

void init_vision(py::module_& m) { (void)m; }

}  // namespace ember::python
