#pragma once
/// torch::nn, mapped onto ember (Note [libtorch compatibility headers]).

#include "detail/aliases.h"
