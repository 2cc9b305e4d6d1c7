// The binding of linear, init helpers and gradient clipping (ember._C._nn).
#include "pyember.h"

namespace ember::python {

void init_nn(py::module_& m) { (void)m; }

}  // namespace ember::python
