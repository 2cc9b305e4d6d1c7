// The binding of statistics, distances, histograms, sets and calculus.
#include "pyember.h"

namespace ember::python {

void init_stats(py::module_& m) { (void)m; }

}  // namespace ember::python
