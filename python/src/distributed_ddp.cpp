// DistributedDataParallel's reducer for Python (ember.nn.parallel.DistributedDataParallel).
#include "pyember.h"

namespace ember::python {

void init_distributed_ddp(py::module_& dm) {}

}  // namespace ember::python
