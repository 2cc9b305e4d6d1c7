#pragma once
/// Saving and loading tensors in the safetensors format
/// (https://github.com/huggingface/safetensors): an 8-byte little-endian header length, a JSON
/// header and a flat little-endian data buffer. Files written here are readable by the
/// `safetensors` package and vice versa (for the dtypes BOOL U8 I8 I16 I32 I64 F16 BF16 F32 F64 C64
/// C128). Writes are atomic (a temporary file, fsync, rename); loading validates the whole header
/// and throws ember::Error
/// "[load] <path>: ..." on any defect.

#include <map>
#include <string>
#include <vector>

#include "ember/ordered_dict.h"
#include "ember/tensor.h"

namespace ember {

/// Writes `tensors` (in key order, each made contiguous on the CPU) and string `metadata`.
/// Tensors that require grad are saved as their data. Throws on an unsupported dtype
/// (complex32) or an I/O error; `path` is then left untouched.
void save(const OrderedDict<std::string, Tensor>& tensors, const std::string& path,
          const std::map<std::string, std::string>& metadata = {});
/// Writes one tensor under the key "0".
void save(const Tensor& tensor, const std::string& path);
/// Writes a list of tensors under the keys "0", "1", ...
void save(const std::vector<Tensor>& tensors, const std::string& path);

/// Reads every tensor of a safetensors file, in the header's order; the metadata goes to
/// `*metadata` when given.
OrderedDict<std::string, Tensor> load_dict(const std::string& path,
                                           std::map<std::string, std::string>* metadata = nullptr);
/// Reads a file holding exactly one tensor (as written by save(Tensor)) into `tensor`.
void load(Tensor& tensor, const std::string& path);
/// Reads a file written by save(std::vector<Tensor>): keys "0".."n-1", in index order.
void load(std::vector<Tensor>& tensors, const std::string& path);
/// The "__metadata__" map of a safetensors file (empty when it has none); reads only the header.
std::map<std::string, std::string> safetensors_metadata(const std::string& path);

}  // namespace ember
