// The binding of losses, normalization, dropout and embedding (ember._C._nn).
#include "pyember.h"

namespace ember::python {

void init_nn_ops(py::module_& m) { (void)m; }

}  // namespace ember::python
