// The binding of multi-tensor optimizer steps (ember._C._optim).
#include "pyember.h"

namespace ember::python {

void init_optim(py::module_& m) { (void)m; }

}  // namespace ember::python
