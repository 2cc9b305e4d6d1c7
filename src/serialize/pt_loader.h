#pragma once
// Tensors from an opened PyTorch checkpoint: the step after the restricted unpickler, shared by
// ember::load_pt and the Python binding (ember._C._pickle).

#include <string>

#include "ember/tensor.h"
#include "serialize/pt_archive.h"

namespace ember::pt {

/// A 1-D CPU tensor of the storage's dtype and numel holding its record's bytes.
Tensor read_storage_tensor(const Archive& archive, const pickle::StorageInfo& storage);

/// The tensor `info` describes, over `storage` (which holds the storage record's bytes, on any
/// device). The geometry was validated by the unpickler; this checks `storage` is large enough.
Tensor make_tensor(const pickle::TensorInfo& info, const Storage& storage,
                   const std::string& where);

/// Throws the error for a file that is not a zip checkpoint, describing its leading bytes.
[[noreturn]] void throw_not_a_checkpoint(const uint8_t* head, size_t size, const std::string& where,
                                         const char* op);

}  // namespace ember::pt
