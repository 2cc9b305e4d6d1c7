#pragma once
/// torch::autograd, mapped onto ember (Note [libtorch compatibility headers]).

#include "detail/aliases.h"
