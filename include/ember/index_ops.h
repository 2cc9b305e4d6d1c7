#pragma once
/// Indexing ops: index_select, gather/scatter, index_add/copy/fill, masked_*, nonzero, take, advanced indexing (index_ops.cpp).

#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include "ember/tensor.h"

namespace ember {

}  // namespace ember
