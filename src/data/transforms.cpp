// Image transforms (ember::data::transforms). Random ones draw one set of parameters per image,
// so a batch gets independent augmentations.
#include "ember/data/transforms.h"

#include "ember/data/dataset.h"

#include <cmath>
#include <limits>

#include "core/parallel_internal.h"
#include "ember/factory.h"
#include "ember/ops.h"
#include "ember/random.h"
#include "ember/shape_ops.h"

namespace ember::data::transforms {
namespace {

// Views a C×H×W image as a batch of one; `batched` says whether to undo it.
Tensor as_batch(const Tensor& x, const char* op, bool& batched) {
  EMBER_CHECK(x.defined(), "[", op, "] input is undefined");
  EMBER_CHECK(x.dim() == 3 || x.dim() == 4, "[", op,
              "] expected an image C×H×W or a batch N×C×H×W, got ", x.dim(), " dims");
  batched = x.dim() == 4;
  return batched ? x : x.unsqueeze(0);
}

int64_t int_max(ScalarType t) {
  switch (t) {
    case kByte:
      return 255;
    case kChar:
      return 127;
    case kShort:
      return 32767;
    case kInt:
      return std::numeric_limits<int32_t>::max();
    case kLong:
      return std::numeric_limits<int64_t>::max();
    default:
      return 1;
  }
}

template <class T>
void rotate_kernel(const Tensor& src, Tensor& dst, const std::vector<double>& angles) {
  int64_t n = src.size(0), c = src.size(1), h = src.size(2), w = src.size(3);
  const T* in = src.data_ptr<T>();
  T* out = dst.data_ptr<T>();
  double cx = double(w - 1) * 0.5, cy = double(h - 1) * 0.5;
  parallel_for(0, n, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      double rad = angles[size_t(i)] * M_PI / 180.0, cs = std::cos(rad), sn = std::sin(rad);
      for (int64_t y = 0; y < h; ++y) {
        for (int64_t x = 0; x < w; ++x) {
          // Inverse map of a counter-clockwise rotation (y grows downwards), nearest pixel with
          // round-half-even as grid_sample's nearest mode.
          double xc = double(x) - cx, yc = double(y) - cy;
          double sx = std::nearbyint(cs * xc - sn * yc + cx);
          double sy = std::nearbyint(sn * xc + cs * yc + cy);
          bool inside = sx >= 0 && sx <= double(w - 1) && sy >= 0 && sy <= double(h - 1);
          int64_t so = inside ? int64_t(sy) * w + int64_t(sx) : 0;
          for (int64_t ch = 0; ch < c; ++ch) {
            int64_t plane = (i * c + ch) * h * w;
            out[plane + y * w + x] = inside ? in[plane + so] : T(0);
          }
        }
      }
    }
  });
}

}  // namespace

namespace detail {

Tensor channel_param(ArrayRef<double> values, const char* what, bool nonzero) {
  EMBER_CHECK_VALUE(!values.empty(), "[Normalize] ", what, " must not be empty");
  if (nonzero)
    for (double v : values)
      EMBER_CHECK_VALUE(v != 0.0, "[Normalize] ", what,
                        " evaluated to zero, leading to division by zero");
  // float32 C×1×1, as libtorch's Normalize builds it.
  return tensor(values.vec(), TensorOptions().dtype(kDouble)).to(kFloat).view({-1, 1, 1});
}

Tensor normalize(const Tensor& x, const Tensor& mean, const Tensor& stddev) {
  EMBER_CHECK(x.defined(), "[Normalize] input is undefined");
  EMBER_CHECK_TYPE(x.is_floating_point(), "[Normalize] input tensor should be a float tensor, got ",
                   dtype_name(x.dtype()));
  if (x.dim() >= 3) {
    int64_t c = x.size(-3);
    for (int64_t k : {mean.size(0), stddev.size(0)})
      EMBER_CHECK(k == 1 || k == c, "[Normalize] ", k, " values for ", c, " channels");
  }
  return x.sub(mean).div(stddev);
}

Example<> stack(std::vector<Example<>> examples) {
  EMBER_CHECK(!examples.empty(), "[Stack] cannot stack an empty batch of examples");
  return stack_examples(examples);
}

Tensor stack(std::vector<TensorExample> examples) {
  EMBER_CHECK(!examples.empty(), "[Stack] cannot stack an empty batch of examples");
  std::vector<Tensor> data;
  data.reserve(examples.size());
  for (auto& e : examples) data.push_back(std::move(e.data));
  return ember::stack(data, 0);
}

}  // namespace detail

TensorLambda<> RandomCrop(std::vector<int64_t> size, int64_t padding,
                          std::optional<Generator> gen) {
  EMBER_CHECK_VALUE(size.size() == 1 || size.size() == 2,
                    "[RandomCrop] size must be one or two ints");
  if (size.size() == 1) size.push_back(size[0]);
  EMBER_CHECK_VALUE(size[0] > 0 && size[1] > 0 && padding >= 0,
                    "[RandomCrop] size must be positive and padding non-negative");
  return TensorLambda<>([size, padding, gen](Tensor input) {
    bool batched;
    Tensor x = as_batch(input, "RandomCrop", batched);
    int64_t n = x.size(0), h = x.size(2), w = x.size(3), th = size[0], tw = size[1];
    int64_t ph = h + 2 * padding, pw = w + 2 * padding;
    EMBER_CHECK(ph >= th && pw >= tw, "[RandomCrop] required crop size (", th, ", ", tw,
                ") is larger than the (padded) input image size (", ph, ", ", pw, ")");
    Tensor tops = randint(0, ph - th + 1, {n}, gen), lefts = randint(0, pw - tw + 1, {n}, gen);
    const auto* tp = tops.data_ptr<int64_t>();
    const auto* lp = lefts.data_ptr<int64_t>();
    Tensor out = zeros({n, x.size(1), th, tw}, TensorOptions().dtype(x.dtype()));
    for (int64_t i = 0; i < n; ++i) {
      // The window in unpadded coordinates, clipped to the image; the rest stays zero.
      int64_t r0 = tp[i] - padding, c0 = lp[i] - padding;
      int64_t sr = std::max<int64_t>(r0, 0), er = std::min(r0 + th, h);
      int64_t sc = std::max<int64_t>(c0, 0), ec = std::min(c0 + tw, w);
      if (er <= sr || ec <= sc) continue;
      out[i]
          .narrow(1, sr - r0, er - sr)
          .narrow(2, sc - c0, ec - sc)
          .copy_(x[i].narrow(1, sr, er - sr).narrow(2, sc, ec - sc));
    }
    return batched ? out : out.squeeze(0);
  });
}

TensorLambda<> RandomHorizontalFlip(double p, std::optional<Generator> gen) {
  EMBER_CHECK_VALUE(p >= 0.0 && p <= 1.0, "[RandomHorizontalFlip] p must be in [0, 1], got ", p);
  return TensorLambda<>([p, gen](Tensor input) {
    bool batched;
    Tensor x = as_batch(input, "RandomHorizontalFlip", batched);
    int64_t n = x.size(0);
    Tensor mask = rand({n}, gen, TensorOptions().dtype(kDouble)).lt(p).view({n, 1, 1, 1});
    Tensor out = where(mask, flip(x, {3}), x);
    return batched ? out : out.squeeze(0);
  });
}

namespace {

Tensor rotate_each(const Tensor& input, const std::vector<double>& angles, bool batched) {
  Tensor x = input.contiguous();
  Tensor out = empty_like(x);
  switch (x.dtype()) {
    case kFloat:
      rotate_kernel<float>(x, out, angles);
      break;
    case kDouble:
      rotate_kernel<double>(x, out, angles);
      break;
    case kByte:
      rotate_kernel<uint8_t>(x, out, angles);
      break;
    default:
      EMBER_THROW(TypeError, "[rotate] supports float32, float64 and uint8 images, got ",
                  dtype_name(x.dtype()));
  }
  return batched ? out : out.squeeze(0);
}

}  // namespace

Tensor rotate(const Tensor& image, double degrees) {
  EMBER_CHECK_VALUE(std::isfinite(degrees), "[rotate] the angle must be finite, got ", degrees);
  bool batched;
  Tensor x = as_batch(image, "rotate", batched);
  return rotate_each(x, std::vector<double>(size_t(x.size(0)), degrees), batched);
}

TensorLambda<> RandomRotation(double degrees, std::optional<Generator> gen) {
  EMBER_CHECK_VALUE(degrees >= 0.0 && std::isfinite(degrees),
                    "[RandomRotation] degrees must be a non-negative number, got ", degrees);
  return TensorLambda<>([degrees, gen](Tensor input) {
    bool batched;
    Tensor x = as_batch(input, "RandomRotation", batched);
    int64_t n = x.size(0);
    Tensor u = rand({n}, gen, TensorOptions().dtype(kDouble));
    std::vector<double> angles(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) angles[size_t(i)] = (u.data_ptr<double>()[i] * 2 - 1) * degrees;
    return rotate_each(x, angles, batched);
  });
}

TensorLambda<> ConvertImageDtype(ScalarType dtype) {
  EMBER_CHECK_TYPE(isFloatingType(dtype) || isIntegralType(dtype, false),
                   "[ConvertImageDtype] unsupported target dtype ", dtype_name(dtype));
  return TensorLambda<>([dtype](Tensor x) {
    EMBER_CHECK(x.defined(), "[ConvertImageDtype] input is undefined");
    ScalarType from = x.dtype();
    EMBER_CHECK_TYPE(isFloatingType(from) || isIntegralType(from, false),
                     "[ConvertImageDtype] unsupported input dtype ", dtype_name(from));
    if (from == dtype) return x;
    if (isFloatingType(from)) {
      if (isFloatingType(dtype)) return x.to(dtype);
      EMBER_CHECK(!((from == kFloat && (dtype == kInt || dtype == kLong)) ||
                    (from == kDouble && dtype == kLong)),
                  "[ConvertImageDtype] the cast from ", dtype_name(from), " to ", dtype_name(dtype),
                  " cannot be performed safely");
      return x.mul(Scalar(double(int_max(dtype)) + 1.0 - 1e-3)).to(dtype);
    }
    if (isFloatingType(dtype)) return x.to(dtype).div(Scalar(double(int_max(from))));
    int64_t in_max = int_max(from), out_max = int_max(dtype);
    if (in_max > out_max) {
      // In unsigned arithmetic: int64's max + 1 overflows int64_t.
      int64_t factor = int64_t((uint64_t(in_max) + 1) / (uint64_t(out_max) + 1));
      return x.div(Scalar(factor), std::string_view("floor")).to(dtype);
    }
    int64_t factor = int64_t((uint64_t(out_max) + 1) / (uint64_t(in_max) + 1));
    return x.to(dtype).mul(Scalar(factor));
  });
}

TensorLambda<> Compose(std::vector<std::function<Tensor(Tensor)>> transforms) {
  for (const auto& t : transforms) EMBER_CHECK_VALUE(bool(t), "[Compose] a transform is empty");
  return TensorLambda<>([ts = std::move(transforms)](Tensor x) {
    for (const auto& t : ts) x = t(std::move(x));
    return x;
  });
}

}  // namespace ember::data::transforms
