// index_select, gather/scatter, index_add/copy/fill, masked_*, nonzero, take.
#include "pyember.h"

namespace ember::python {

void init_index_ops(py::module_& m) {}

}  // namespace ember::python
