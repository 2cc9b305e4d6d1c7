#include "pyember.h"

void init_amp(py::module_& m) { (void)m; }
