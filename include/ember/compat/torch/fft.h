#pragma once
/// torch::fft, mapped onto ember (Note [libtorch compatibility headers]).

#include "detail/aliases.h"
