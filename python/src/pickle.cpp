// Bindings: see init_pickle in pyember.h.
#include "pyember.h"

namespace ember::python {

void init_pickle(py::module_& m) { (void)m; }

}  // namespace ember::python
