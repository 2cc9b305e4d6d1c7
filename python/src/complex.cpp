// The binding of complex constructors and views, complex32.
#include "pyember.h"

namespace ember::python {

void init_complex(py::module_& m) { (void)m; }

}  // namespace ember::python
