#pragma once
/// ATen, mapped onto ember: `at::Tensor` is `ember::Tensor` (Note [libtorch compatibility headers]).

#include "../torch/detail/aliases.h"
