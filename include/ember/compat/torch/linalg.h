#pragma once
/// torch::linalg, mapped onto ember (Note [libtorch compatibility headers]).

#include "detail/aliases.h"
