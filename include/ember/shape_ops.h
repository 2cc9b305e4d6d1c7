#pragma once
/// Shape ops: tensor_split, flip/roll/rot90, repeat/tile, diag*, *_scatter, one_hot, pad, meshgrid, broadcast_to, searchsorted/bucketize/histc/bincount, cartesian_prod/combinations (shape_ops.cpp, search_ops.cpp).

#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include "ember/tensor.h"

namespace ember {

}  // namespace ember
