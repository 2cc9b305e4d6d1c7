#pragma once
/// torch::NoGradGuard, torch::manual_seed and the utility names, mapped onto ember (Note [libtorch compatibility headers]).

#include "detail/aliases.h"
