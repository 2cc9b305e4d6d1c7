#pragma once
/// torch::Tensor, dtypes and factories, mapped onto ember (Note [libtorch compatibility headers]).

#include "detail/aliases.h"
