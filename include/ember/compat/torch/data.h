#pragma once
/// torch::data, mapped onto ember (Note [libtorch compatibility headers]).

#include "detail/aliases.h"
