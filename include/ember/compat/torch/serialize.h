#pragma once
/// torch::save / torch::load, mapped onto ember (Note [libtorch compatibility headers]).

#include "detail/aliases.h"
