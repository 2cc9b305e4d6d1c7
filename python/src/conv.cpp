// The binding of convolution, pooling and resampling (ember._C._nn).
#include "pyember.h"

namespace ember::python {

void init_conv(py::module_& m) { (void)m; }

}  // namespace ember::python
