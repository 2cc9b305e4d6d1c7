#include "pyember.h"

void init_nested(py::module_& m) { (void)m; }
