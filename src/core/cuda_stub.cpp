// The CUDA backend's stand-in when ember is built without nvcc: the core links and reports
// that no GPU is available.
#include "ember/version.h"

namespace ember {
bool cuda_is_available() { return false; }
int cuda_device_count() { return 0; }
}  // namespace ember
