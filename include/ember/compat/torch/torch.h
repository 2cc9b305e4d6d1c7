#pragma once
/// libtorch's umbrella header: tensors, autograd, nn, optim, data and serialization, mapped onto ember (Note [libtorch compatibility headers]).

#include "detail/aliases.h"
