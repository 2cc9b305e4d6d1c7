// The binding of the recurrent layers and cells (ember._C._nn).
#include "pyember.h"

namespace ember::python {

void init_rnn(py::module_& m) { (void)m; }

}  // namespace ember::python
