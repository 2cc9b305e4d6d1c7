#pragma once
// One check for code that reads a tensor's elements outside a kernel stub (printing, data_ptr,
// the Python binding's tolist/numpy): a tensor with elements but no memory is a batched tensor
// of vmap (Note [Batched tensors] in src/func/batched.h).

#include "ember/tensor.h"

namespace ember {

/// RuntimeError "[op] ... batched tensor ..." unless `t`'s elements have memory.
void check_has_memory(const Tensor& t, const char* op);

}  // namespace ember
