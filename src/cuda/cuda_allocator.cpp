// The CUDA caching allocator on the device memory backend (Note [CUDA caching allocator]).
#include "cuda/cuda_context.h"

namespace ember::cuda {}  // namespace ember::cuda
