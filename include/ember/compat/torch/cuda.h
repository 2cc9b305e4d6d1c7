#pragma once
/// torch::cuda::is_available / device_count, mapped onto ember (Note [libtorch compatibility headers]).

#include "detail/aliases.h"
