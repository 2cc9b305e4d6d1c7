#pragma once
/// Reductions: sum, mean, prod, max/min, var/std, norms, logsumexp, all/any (reduce_ops.cpp).

#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include "ember/tensor.h"

namespace ember {

}  // namespace ember
