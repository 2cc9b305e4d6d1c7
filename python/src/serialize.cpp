// The binding of safetensors save and load (ember._C._serialize).
#include "pyember.h"

namespace ember::python {

void init_serialize(py::module_& m) { (void)m; }

}  // namespace ember::python
