// The binding of the remaining torch.linalg and LAPACK-style functions.
#include "pyember.h"

namespace ember::python {

void init_linalg_extra(py::module_& m) { (void)m; }

}  // namespace ember::python
