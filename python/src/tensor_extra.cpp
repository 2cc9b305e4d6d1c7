// The binding of the remaining tensor ops.
#include "pyember.h"

namespace ember::python {

void init_tensor_extra(py::module_& m) { (void)m; }

}  // namespace ember::python
