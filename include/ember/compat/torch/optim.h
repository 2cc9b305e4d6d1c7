#pragma once
/// torch::optim, mapped onto ember (Note [libtorch compatibility headers]).

#include "detail/aliases.h"
