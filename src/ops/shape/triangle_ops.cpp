// tril / triu: the lower / upper triangle of the last two dims, the rest zeroed, in a contiguous
// copy (the zeroing is triangle_stub's).
#include "autograd/record.h"
#include "core/tensor_util.h"
#include "ember/factory.h"
#include "ember/ops.h"
#include "kernels/stubs/linalg.h"
#include "ops/call_path.h"

namespace ember {
namespace {

Tensor triangle(const Tensor& x, int64_t k, bool lower, const char* op) {
  // IndexError as PyTorch 1.13 (it indexes dim -2 before checking the rank).
  EMBER_CHECK_INDEX(x.dim() >= 2, "[", op,
                    "] input tensor must have at least 2 dimensions, "
                    "got ",
                    x.dim(), "-D tensor of shape ", shape_str(x.sizes()));
  Tensor out = x.resolve_conj().clone().contiguous();
  if (out.numel() == 0) return out;
  triangle_stub(x.device().type(), out, k, lower);
  return out;
}

/// out= of a shape-preserving op: the result's dtype exactly, an empty out is resized.
Tensor& assign_result(Tensor& out, const Tensor& r, const char* op) {
  EMBER_CHECK(out.dtype() == r.dtype(), "[", op, "] expected out dtype ", dtype_name(r.dtype()),
              ", got ", dtype_name(out.dtype()));
  if (out.sizes() != r.sizes()) {
    EMBER_CHECK(out.numel() == 0, "[", op, "] out= tensor has shape ", shape_str(out.sizes()),
                " but the result has shape ", shape_str(r.sizes()));
    resize_output(out, r.sizes());
  }
  return out.copy_(r);
}

}  // namespace

namespace {
/// tril/triu keep a fixed set of elements: gradient and tangent are masked the same way
/// (args: diagonal, lower).
Tensor masked_like(const Tensor& t, const autograd::RuleArgs& a) {
  const int64_t diagonal = a.i(0);
  return a.b(1) ? ember::tril(t, diagonal) : ember::triu(t, diagonal);
}

Tensor triangle_rec(const Tensor& x, int64_t diagonal, bool lower) {
  const char* op = lower ? "tril" : "triu";
  autograd::OpRecorder rec(op, {x});
  Tensor out = triangle(x, diagonal, lower, op);
  if (rec) {
    rec.args(diagonal, lower);
    rec.record(
        out,
        [](autograd::VjpCtx& c) {
          return autograd::variable_list{masked_like(c.grads[0], c.args())};
        },
        {},
        [](autograd::JvpCtx& c) {
          return autograd::variable_list{masked_like(c.tangent_or_zeros(0), c.args())};
        });
  }
  return out;
}

Tensor& triangle_inplace(Tensor& x, int64_t diagonal, bool lower) {
  const char* op = lower ? "tril_" : "triu_";
  autograd::OpRecorder rec(op, {x});
  x.copy_(triangle(x, diagonal, lower, op));
  if (rec) {
    rec.args(diagonal, lower);
    rec.record_inplace(
        x,
        [](autograd::VjpCtx& c) {
          return autograd::variable_list{masked_like(c.grads[0], c.args())};
        },
        {},
        [](autograd::JvpCtx& c) {
          return autograd::variable_list{masked_like(c.tangent_or_zeros(0), c.args())};
        });
  }
  return x;
}
}  // namespace

Tensor tril(const Tensor& x, int64_t diagonal) {
  EMBER_OP(tril, x, diagonal);
  return triangle_rec(x, diagonal, true);
}
Tensor triu(const Tensor& x, int64_t diagonal) {
  EMBER_OP(triu, x, diagonal);
  return triangle_rec(x, diagonal, false);
}

Tensor& tril_(Tensor& x, int64_t diagonal) {
  EMBER_OP(tril_, x, diagonal);
  return triangle_inplace(x, diagonal, true);
}
Tensor& triu_(Tensor& x, int64_t diagonal) {
  EMBER_OP(triu_, x, diagonal);
  return triangle_inplace(x, diagonal, false);
}

Tensor& tril_out(Tensor& out, const Tensor& x, int64_t diagonal) {
  EMBER_OP(tril_out, out, x, diagonal);
  autograd::check_out_not_differentiable("tril", {x});
  return assign_result(out, tril(x, diagonal), "tril");
}
Tensor& triu_out(Tensor& out, const Tensor& x, int64_t diagonal) {
  EMBER_OP(triu_out, out, x, diagonal);
  autograd::check_out_not_differentiable("triu", {x});
  return assign_result(out, triu(x, diagonal), "triu");
}

}  // namespace ember
