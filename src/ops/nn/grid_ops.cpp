// grid_sampler (a primitive: kernels in src/kernels/cpu/nn/grid.cpp, gradients for input and
// grid from a backward kernel) and its front ends grid_sample / affine_grid.
#include "autograd/record.h"
#include "core/tensor_util.h"
#include "ember/blas.h"
#include "ember/factory.h"
#include "ember/linalg_extra.h"
#include "ember/ops.h"
#include "kernels/stubs/grid.h"
#include "ops/call_path.h"

namespace ember {
namespace {

void check_grid_sampler(const Tensor& input, const Tensor& grid, int64_t interp, int64_t pad) {
  const char* op = "grid_sampler";
  EMBER_CHECK(input.defined() && grid.defined(), "[", op, "] input and grid must be defined");
  EMBER_CHECK(input.device() == grid.device(), "[", op,
              "] expected input and grid to be on same device, but input is on ", input.device(),
              " and grid is on ", grid.device());
  EMBER_CHECK(input.dim() == grid.dim() && (input.dim() == 4 || input.dim() == 5), "[", op,
              "] expected 4D or 5D input and grid with same number of dimensions, but got input "
              "with sizes ",
              input.sizes(), " and grid with sizes ", grid.sizes());
  EMBER_CHECK(input.size(0) == grid.size(0), "[", op,
              "] expected grid and input to have same batch size, but got input with sizes ",
              input.sizes(), " and grid with sizes ", grid.sizes());
  EMBER_CHECK(grid.size(-1) == input.dim() - 2, "[", op, "] expected grid to have size ",
              input.dim() - 2, " in last dimension, but got grid with sizes ", grid.sizes());
  for (int64_t d = 2; d < input.dim(); ++d) {
    EMBER_CHECK(input.size(d) > 0, "[", op,
                "] expected input to have non-empty spatial dimensions, but input has sizes ",
                input.sizes(), " with dimension ", d, " being empty");
  }
  EMBER_CHECK(interp >= 0 && interp <= 2, "[", op, "] interpolation_mode must be 0, 1 or 2, got ",
              interp);
  EMBER_CHECK(pad >= 0 && pad <= 2, "[", op, "] padding_mode must be 0, 1 or 2, got ", pad);
  EMBER_CHECK(interp != 2 || input.dim() == 4, "[", op,
              "] bicubic interpolation only supports 4D input");
  EMBER_CHECK(input.dtype() == grid.dtype(), "[", op,
              "] expected input and grid to have the same dtype, but got ",
              dtype_name(input.dtype()), " and ", dtype_name(grid.dtype()));
  EMBER_CHECK(input.dtype() == kFloat || input.dtype() == kDouble, "[", op,
              "] not implemented for ", dtype_name(input.dtype()),
              " (supported: float32, float64)");
}

GridSampleArgs sample_args(int64_t interp, int64_t pad, bool align_corners) {
  GridSampleArgs a;
  a.interpolation = int(interp), a.padding = int(pad), a.align_corners = align_corners;
  return a;
}

}  // namespace

Tensor grid_sampler(const Tensor& input, const Tensor& grid, int64_t interpolation_mode,
                    int64_t padding_mode, bool align_corners) {
  EMBER_OP_CAST(grid_sampler, grid_sampler, input, grid, interpolation_mode, padding_mode,
                align_corners);
  check_grid_sampler(input, grid, interpolation_mode, padding_mode);
  autograd::OpRecorder rec("grid_sampler", {input, grid});
  DimVector os;
  os.push_back(input.size(0));
  os.push_back(input.size(1));
  for (int64_t d = 1; d + 1 < grid.dim(); ++d) os.push_back(grid.size(d));
  Tensor out = empty_tensor("grid_sampler", os, input.dtype(), input.device());
  if (out.numel() > 0) {
    Tensor x = input.contiguous(), g = grid.contiguous();
    grid_sampler_stub(input.device().type(), x, g, out,
                      sample_args(interpolation_mode, padding_mode, align_corners));
  }
  if (rec) {
    rec.args(interpolation_mode, padding_mode, align_corners);
    rec.record(out,
               [](autograd::VjpCtx& c) {
                 const Tensor &x = c.saved[0], &g = c.saved[1];
                 const GridSampleArgs a = sample_args(c.args().i(0), c.args().i(1), c.args().b(2));
                 Tensor gi, gg;
                 if (c.needs(0)) gi = zeros(x.sizes(), TensorOptions(x.dtype()).device(x.device()));
                 if (c.needs(1)) gg = zeros(g.sizes(), TensorOptions(g.dtype()).device(g.device()));
                 if (c.grads[0].numel() > 0 && (gi.defined() || gg.defined())) {
                   Tensor go = c.grads[0].contiguous(), xc = x.contiguous(), gc = g.contiguous();
                   grid_sampler_backward_stub(x.device().type(), go, xc, gc, gi, gg, a);
                 }
                 return autograd::variable_list{gi, gg};
               },
               {input, grid});
  }
  return out;
}

Tensor grid_sample(const Tensor& input, const Tensor& grid, std::string_view mode,
                   std::string_view padding_mode, std::optional<bool> align_corners) {
  int64_t interp = 0, pad = 0;
  if (mode == "bilinear") {
    interp = 0;
  } else if (mode == "nearest") {
    interp = 1;
  } else if (mode == "bicubic") {
    interp = 2;
  } else {
    EMBER_THROW(ValueError,
                "[grid_sample] expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: '",
                mode, "'");
  }
  if (padding_mode == "zeros") {
    pad = 0;
  } else if (padding_mode == "border") {
    pad = 1;
  } else if (padding_mode == "reflection") {
    pad = 2;
  } else {
    EMBER_THROW(ValueError,
                "[grid_sample] expected padding_mode to be 'zeros', 'border', or 'reflection', "
                "but got: '",
                padding_mode, "'");
  }
  return grid_sampler(input, grid, interp, pad, align_corners.value_or(false));
}

namespace {

/// n points spanning [-1, 1] at pixel centres (align_corners: at the corner pixels' centres).
Tensor axis_points(int64_t n, bool align_corners, ScalarType dt, Device dev) {
  TensorOptions o = TensorOptions(dt).device(dev);
  if (n <= 1) return zeros({n}, o);
  Tensor r = linspace(-1, 1, n, o);
  return align_corners ? r : r.mul(Scalar(double(n - 1) / double(n)));
}

}  // namespace

Tensor affine_grid_generator(const Tensor& theta, IntArrayRef size, bool align_corners) {
  EMBER_OP(affine_grid_generator, theta, size, align_corners);
  const char* op = "affine_grid_generator";
  EMBER_CHECK(size.size() == 4 || size.size() == 5, "[", op,
              "] AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs, got size ",
              size);
  const int nd = int(size.size()) - 2;
  const int64_t N = size[0];
  EMBER_CHECK(
      theta.dim() == 3 && theta.size(0) == N && theta.size(1) == nd && theta.size(2) == nd + 1, "[",
      op, "] expected theta of shape (", N, ", ", nd, ", ", nd + 1, ") for size ", size, ", got ",
      theta.sizes());
  const ScalarType dt = theta.dtype();
  const Device dev = theta.device();
  // The base grid holds (x, y[, z], 1) per output point, x along the last dim.
  std::vector<Tensor> axes;
  int64_t points = 1;
  for (int d = 0; d < nd; ++d) points *= size[size_t(2 + d)];
  DimVector full_shape;
  for (int d = 0; d < nd; ++d) full_shape.push_back(size[size_t(2 + d)]);
  std::vector<Tensor> cols;
  for (int c = 0; c < nd; ++c) {
    const int d = nd - 1 - c;  // component c varies along spatial dim d
    Tensor ax = axis_points(size[size_t(2 + d)], align_corners, dt, dev);
    DimVector view(size_t(nd), 1);
    view[size_t(d)] = size[size_t(2 + d)];
    cols.push_back(ax.view(view).expand(full_shape).reshape({points}));
  }
  cols.push_back(ones({points}, TensorOptions(dt).device(dev)));
  Tensor base = stack(cols, 1);  // (points, nd + 1)
  // grid[n] = base theta[n]ᵀ
  Tensor grid = matmul(base.unsqueeze(0), theta.transpose(1, 2));
  DimVector out;
  out.push_back(N);
  for (int d = 0; d < nd; ++d) out.push_back(size[size_t(2 + d)]);
  out.push_back(nd);
  return grid.reshape(out);
}

Tensor affine_grid(const Tensor& theta, IntArrayRef size, std::optional<bool> align_corners) {
  const char* op = "affine_grid";
  EMBER_CHECK_VALUE(isFloatingType(theta.dtype()), "[", op,
                    "] Expected theta to have floating point type, but got ",
                    dtype_name(theta.dtype()));
  if (size.size() == 4) {
    EMBER_CHECK_VALUE(theta.dim() == 3 && theta.size(-2) == 2 && theta.size(-1) == 3, "[", op,
                      "] Expected a batch of 2D affine matrices of shape Nx2x3 for size ", size,
                      ". Got ", theta.sizes(), ".");
  } else if (size.size() == 5) {
    EMBER_CHECK_VALUE(theta.dim() == 3 && theta.size(-2) == 3 && theta.size(-1) == 4, "[", op,
                      "] Expected a batch of 3D affine matrices of shape Nx3x4 for size ", size,
                      ". Got ", theta.sizes(), ".");
  } else {
    EMBER_THROW(NotImplementedError, "[", op,
                "] affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                "respectively. Got size ",
                size, ".");
  }
  int64_t smallest = size[0];
  for (int64_t s : size) smallest = std::min(smallest, s);
  EMBER_CHECK_VALUE(smallest > 0, "[", op, "] Expected non-zero, positive output size. Got ", size);
  EMBER_CHECK(theta.size(0) == size[0], "[", op, "] Expected theta of batch size ", size[0],
              ", got ", theta.sizes());
  return affine_grid_generator(theta, size, align_corners.value_or(false));
}

}  // namespace ember
