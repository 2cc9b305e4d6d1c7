#pragma once
/// Scans, softmax and order statistics: cumsum..., softmax/log_softmax, sort/argsort/topk, median/mode/kthvalue/quantile, unique (scan_ops.cpp, sort_ops.cpp).

#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include "ember/tensor.h"

namespace ember {

}  // namespace ember
