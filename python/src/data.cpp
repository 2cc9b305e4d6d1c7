// The binding of the IDX reader and batch image transforms (ember._C._data).
#include "pyember.h"

namespace ember::python {

void init_data(py::module_& m) { (void)m; }

}  // namespace ember::python
