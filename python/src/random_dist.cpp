// Bindings: see init_random_dist in pyember.h.
#include "pyember.h"

namespace ember::python {

void init_random_dist(py::module_& m) { (void)m; }

}  // namespace ember::python
