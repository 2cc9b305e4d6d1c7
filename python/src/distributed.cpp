// The _C._distributed submodule: stores, process groups and the collectives of
// ember::distributed (ember.distributed).
#include "pyember.h"

namespace ember::python {

void init_distributed_ddp(py::module_& dm);
void init_distributed_run(py::module_& dm);

void init_distributed(py::module_& m) {
  auto dm = m.def_submodule("_distributed", "ember.distributed: process groups and collectives");
  init_distributed_ddp(dm);
  init_distributed_run(dm);
}

}  // namespace ember::python
