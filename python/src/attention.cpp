#include "pyember.h"

void init_attention(py::module_& m) { (void)m; }
