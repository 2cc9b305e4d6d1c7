// matmul and the other matrix products, einsum.
#include "pyember.h"

namespace ember::python {

void init_blas(py::module_& m) {}

}  // namespace ember::python
