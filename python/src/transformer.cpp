#include "pyember.h"

void init_transformer(py::module_& m) { (void)m; }
