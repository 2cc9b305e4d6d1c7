// Bindings: see init_distributions in pyember.h.
#include "pyember.h"

namespace ember::python {

void init_distributions(py::module_& m) { (void)m; }

}  // namespace ember::python
