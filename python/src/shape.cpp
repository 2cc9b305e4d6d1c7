// tensor_split, flip/roll, repeat/tile, diag*, pad, one_hot, meshgrid, searchsorted, histc.
#include "pyember.h"

namespace ember::python {

void init_shape(py::module_& m) {}

}  // namespace ember::python
