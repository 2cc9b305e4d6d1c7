#pragma once
/// torch::special, mapped onto ember (Note [libtorch compatibility headers]).

#include "detail/aliases.h"
