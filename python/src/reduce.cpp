// reductions (sum, mean, max/min, var/std, norms, logsumexp, all/any).
#include "pyember.h"

namespace ember::python {

void init_reduce(py::module_& m) {}

}  // namespace ember::python
