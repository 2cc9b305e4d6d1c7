#pragma once
/// Composable function transforms (PyTorch's `torch.func`, functorch 1.13), in C++:
/// `grad`, `grad_and_value`, `vjp`, `jvp`, `vmap`, `jacrev`, `jacfwd`, `hessian`,
/// `functional_call` and `stack_module_state`.
///
/// A transformed function takes and returns lists of tensors (`Fn`). Convenience overloads take
/// single-tensor functions. Transforms nest in any order (`vmap(grad(f))`, `jacfwd(jacrev(f))`,
/// `vmap(vmap(f))`); each active transform is one level of a thread-local stack (at most 64).
/// Under vmap, tensors with a batch dim are wrappers that no kernel sees; ops on them run their
/// batching rules. Errors are typed: an op without a batching rule raises NotImplementedError,
/// data-dependent shapes, random ops under randomness "error", in-place writes of batched
/// values into unbatched tensors, `.item()` and escaped batched tensors raise RuntimeError.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ember/tensor.h"

namespace ember {
namespace nn {
class Module;
}

namespace func {

using TensorList = std::vector<Tensor>;
/// A function of a list of tensors returning a list of tensors.
using Fn = std::function<TensorList(const TensorList&)>;
/// A function of one tensor returning one tensor.
using UnaryFn = std::function<Tensor(const Tensor&)>;

/// vmap's treatment of random ops (functorch's `randomness`).
enum class VmapRandomness { Error, Different, Same };

/// Options of vmap; an empty `in_dims` / `out_dims` means 0 for every argument / output, and
/// `std::nullopt` in them means "not batched".
struct VmapOptions {
  std::vector<std::optional<int64_t>> in_dims;
  std::vector<std::optional<int64_t>> out_dims;
  VmapRandomness randomness = VmapRandomness::Error;
  std::optional<int64_t> chunk_size;  ///< run the batch in chunks of this size
  /// When set, gives out_dims from the number of outputs (once the function has returned).
  std::function<std::vector<std::optional<int64_t>>(size_t)> out_dims_fn;
};

/// Runs `f` over a batch dim of its arguments: `vmap_call(f, args, opts)` equals stacking
/// `f` applied to each slice along `in_dims`, with the results batched along `out_dims`.
TensorList vmap_call(const Fn& f, const TensorList& args, const VmapOptions& opts = {});
/// The vectorized form of `f` (`vmap(f, in_dims, out_dims, randomness, chunk_size)`).
Fn vmap(Fn f, VmapOptions opts = {});
/// vmap of a single-tensor function over `in_dim`, results along `out_dim`.
UnaryFn vmap(UnaryFn f, int64_t in_dim = 0, int64_t out_dim = 0);

/// Gradients and value of a function whose first output is a one-element tensor.
struct GradAndValue {
  TensorList grads;    ///< one per argnum
  TensorList outputs;  ///< f's outputs: the value first, then the aux outputs
};
/// The gradient of output 0 of `f` with respect to the arguments `argnums` (default {0}).
GradAndValue grad_and_value_call(const Fn& f, const TensorList& args,
                                 const std::vector<int64_t>& argnums = {0});
/// `grad(f, argnums)`: the function returning the gradients (one per argnum); with
/// `has_aux` the aux outputs (outputs 1...) follow the gradients.
Fn grad(Fn f, std::vector<int64_t> argnums = {0}, bool has_aux = false);
/// `grad` of a scalar function of one tensor.
UnaryFn grad(UnaryFn f);
/// `grad_and_value(f, argnums)`: gradients, then f's outputs.
Fn grad_and_value(Fn f, std::vector<int64_t> argnums = {0});

/// The outputs of `f` at `primals` and the function mapping output cotangents to input
/// cotangents (`torch.func.vjp`). The vjp function may be called many times, and under vmap.
struct VjpResult {
  TensorList outputs;
  std::function<TensorList(const TensorList&)> vjp_fn;
};
VjpResult vjp(const Fn& f, const TensorList& primals);

/// The outputs of `f` at `primals` and their tangents along `tangents` (forward mode).
std::pair<TensorList, TensorList> jvp(const Fn& f, const TensorList& primals,
                                      const TensorList& tangents);

/// Jacobians of every output with respect to every argnum, in reverse mode: entry
/// [o * argnums.size() + a] has shape output_o.shape + arg_a.shape.
TensorList jacrev_call(const Fn& f, const TensorList& args,
                       const std::vector<int64_t>& argnums = {0});
/// The same in forward mode.
TensorList jacfwd_call(const Fn& f, const TensorList& args,
                       const std::vector<int64_t>& argnums = {0});
Fn jacrev(Fn f, std::vector<int64_t> argnums = {0});
Fn jacfwd(Fn f, std::vector<int64_t> argnums = {0});
/// `jacfwd(jacrev(f))`: second derivatives of output 0 with respect to argnums.
Fn hessian(Fn f, std::vector<int64_t> argnums = {0});
UnaryFn jacrev(UnaryFn f);
UnaryFn jacfwd(UnaryFn f);
UnaryFn hessian(UnaryFn f);

/// Runs `module` with some parameters and buffers replaced by `tensors` (keyed by their
/// state_dict names; names not given keep their tensors). The module's own member handles see
/// the substitutes during the call, and the module is unchanged afterwards. `call` runs the
/// module (e.g. `[&] { return TensorList{model->forward(x)}; }`).
TensorList functional_call(nn::Module& module, const std::map<std::string, Tensor>& tensors,
                           const std::function<TensorList()>& call);

/// Stacks the parameters and buffers of `models` (same structure) along a new dim 0, for
/// ensembling with vmap + functional_call. Parameters of the result require grad.
std::pair<std::map<std::string, Tensor>, std::map<std::string, Tensor>> stack_module_state(
    const std::vector<nn::Module*>& models);

/// Whether `t` is a batched tensor of an active vmap (a wrapper).
bool is_batchedtensor(const Tensor& t);

}  // namespace func
}  // namespace ember
