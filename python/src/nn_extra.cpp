// The binding of grid_sample, affine_grid, fractional max pooling and friends.
#include "pyember.h"

namespace ember::python {

void init_nn_extra(py::module_& m) { (void)m; }

}  // namespace ember::python
