// The binding of torch.fft, stft/istft and the window functions.
#include "pyember.h"

namespace ember::python {

void init_fft(py::module_& m) { (void)m; }

}  // namespace ember::python
