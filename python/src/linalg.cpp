// ember.linalg (the _C._linalg submodule).
#include "pyember.h"

namespace ember::python {

void init_linalg(py::module_& m) {
  py::module_ lm = m.attr("_linalg");  // created first in module.cpp
}

}  // namespace ember::python
