// scans, softmax, sort/topk, median/mode/kthvalue/quantile, unique.
#include "pyember.h"

namespace ember::python {

void init_sort(py::module_& m) {}

}  // namespace ember::python
