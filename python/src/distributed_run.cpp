// The launcher for Python (`python -m ember.distributed.run`).
#include "pyember.h"

namespace ember::python {

void init_distributed_run(py::module_& dm) {}

}  // namespace ember::python
