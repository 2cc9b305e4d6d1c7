// Tensor printing: operator<<, Tensor::toString() and Tensor::print(), in libtorch 1.13's format.
//
// Note [Tensor print format]
// Output matches libtorch 1.13 byte for byte, quirks included, so that programs ported from
// libtorch print the same thing:
// - values are converted to double first; complex tensors print their real parts only;
// - one format per 1-D tensor / per matrix: integers print without decimals, otherwise fixed
//   with 4 decimals, a common "1e-05 *" scale factor, or scientific when magnitudes differ a lot;
// - matrices wider than 80 columns print in "Columns a to b" blocks, the first row of each block
//   on the header's line;
// - >= 3-D tensors print "(i,j,.,.) = " matrix blocks with the *first* index varying fastest;
// - no summarisation: every element is printed;
// - the footer is "[ CPUFloatType{2,3} ]"; toString() is just "CPUFloatType".
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <vector>

#include "core/memory_check.h"
#include "ember/tensor.h"

namespace ember {

namespace {

constexpr int64_t kLineSize = 80;

// Saves and restores a stream's number formatting around a scope.
struct FormatGuard {
  explicit FormatGuard(std::ostream& os) : os_(os), saved_(nullptr) { saved_.copyfmt(os); }
  ~FormatGuard() { os_.copyfmt(saved_); }

 private:
  std::ostream& os_;
  std::ios saved_;
};

std::ios_base& defaultfloat(std::ios_base& b) {
  b.unsetf(std::ios_base::floatfield);
  return b;
}

// Picks the format of a block of values: sets the stream's float mode and precision and
// returns (scale, field width).
std::pair<double, int64_t> print_format(std::ostream& os, const double* p, int64_t n) {
  if (n == 0) return {1.0, 0};
  bool int_mode = true;
  for (int64_t i = 0; i < n; ++i) {
    if (std::isfinite(p[i]) && p[i] != std::ceil(p[i])) {
      int_mode = false;
      break;
    }
  }
  int64_t offset = 0;
  while (offset < n && !std::isfinite(p[offset])) ++offset;
  double exp_min = 1, exp_max = 1;
  if (offset < n) {
    exp_min = exp_max = std::fabs(p[offset]);
    for (int64_t i = offset; i < n; ++i) {
      double z = std::fabs(p[i]);
      if (std::isfinite(z)) {
        if (z < exp_min) exp_min = z;
        // libtorch compares the signed value here: large negative values do not widen.
        if (p[i] > exp_max) exp_max = z;
      }
    }
    exp_min = exp_min != 0 ? std::floor(std::log10(exp_min)) + 1 : 1;
    exp_max = exp_max != 0 ? std::floor(std::log10(exp_max)) + 1 : 1;
  }
  double scale = 1;
  int64_t sz;
  if (int_mode) {
    if (exp_max > 9) {
      sz = 11;
      os << std::scientific << std::setprecision(4);
    } else {
      sz = int64_t(exp_max) + 1;
      os << defaultfloat;
    }
  } else if (exp_max - exp_min > 4) {
    sz = 11;
    if (std::fabs(exp_max) > 99 || std::fabs(exp_min) > 99) sz += 1;
    os << std::scientific << std::setprecision(4);
  } else {
    if (exp_max > 5 || exp_max < 0) {
      sz = 7;
      scale = std::pow(10, exp_max - 1);
    } else {
      sz = exp_max == 0 ? 7 : int64_t(exp_max) + 6;
    }
    os << std::fixed << std::setprecision(4);
  }
  return {scale, sz};
}

void print_indent(std::ostream& os, int64_t indent) {
  for (int64_t i = 0; i < indent; ++i) os << ' ';
}

void print_scale(std::ostream& os, double scale) {
  FormatGuard g(os);
  os << defaultfloat << scale << " *" << std::endl;
}

// A rows x cols row-major matrix, wrapped into column blocks that fit `linesize`.
void print_matrix(std::ostream& os, const double* p, int64_t rows, int64_t cols, int64_t linesize,
                  int64_t indent) {
  auto [scale, sz] = print_format(os, p, rows * cols);
  print_indent(os, indent);
  int64_t per_line = (linesize - indent) / (sz + 1);
  int64_t first = 0;
  while (first < cols) {
    int64_t last = first + per_line <= cols ? first + per_line - 1 : cols - 1;
    if (per_line < cols) {
      if (first != 0) os << std::endl;
      os << "Columns " << first + 1 << " to " << last + 1;
      print_indent(os, indent);
    }
    if (scale != 1) {
      print_scale(os, scale);
      print_indent(os, indent);
    }
    for (int64_t r = 0; r < rows; ++r) {
      const double* row = p + r * cols;
      for (int64_t c = first; c <= last; ++c) {
        os << std::setw(int(sz)) << row[c] / scale;
        if (c == last) {
          os << std::endl;
          if (r != rows - 1) {
            print_indent(os, indent);
            if (scale != 1) os << ' ';
          }
        } else {
          os << ' ';
        }
      }
    }
    first = last + 1;
  }
}

// >= 3-D: one "(i,j,.,.) = " block per matrix; the counter advances its first index first.
void print_blocks(std::ostream& os, const double* p, IntArrayRef sizes, int64_t linesize) {
  int64_t nd = int64_t(sizes.size());
  int64_t rows = sizes[nd - 2], cols = sizes[nd - 1];
  std::vector<int64_t> stride(size_t(nd - 2));
  int64_t s = rows * cols;
  for (int64_t i = nd - 3; i >= 0; --i) {
    stride[size_t(i)] = s;
    s *= sizes[i];
  }
  std::vector<int64_t> counter(size_t(nd - 2), 0);
  counter[0] = -1;
  bool start = true;
  while (true) {
    bool finished = false;
    for (int64_t i = 0;; ++i) {
      if (++counter[size_t(i)] >= sizes[i]) {
        if (i == nd - 3) {
          finished = true;
          break;
        }
        counter[size_t(i)] = 0;
      } else {
        break;
      }
    }
    if (finished) break;
    if (start)
      start = false;
    else
      os << std::endl;
    os << "(";
    int64_t off = 0;
    for (int64_t i = 0; i < nd - 2; ++i) {
      off += counter[size_t(i)] * stride[size_t(i)];
      os << counter[size_t(i)] + 1 << ",";
    }
    os << ".,.) = " << std::endl;
    print_matrix(os, p + off, rows, cols, linesize, 1);
  }
}

std::string backend_name(Device d) {
  switch (d.type()) {
    case kCPU:
      return "CPU";
    case kCUDA:
      return "CUDA";
    case kMeta:
      return "Meta";
    default: {
      std::string n = device_type_name(d.type());
      for (char& c : n) c = char(std::toupper(static_cast<unsigned char>(c)));
      return n;
    }
  }
}

}  // namespace

std::string Tensor::toString() const {
  if (!defined()) return "UndefinedType";
  return backend_name(device()) + ember::toString(dtype()) + "Type";
}

void Tensor::print() const {
  if (defined())
    std::cerr << "[" << toString() << " " << sizes() << "]" << std::endl;
  else
    std::cerr << "[UndefinedTensor]" << std::endl;
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  FormatGuard guard(os);
  if (!t.defined()) return os << "[ Tensor (undefined) ]";
  Tensor src = t.is_complex() ? t.real() : t;
  Tensor d = src.to(Device(kCPU), kDouble).contiguous();
  check_has_memory(d, "print");
  const double* p = static_cast<const double*>(d.data_ptr());
  int64_t nd = t.dim();
  if (nd == 0) {
    os << defaultfloat << p[0] << std::endl;
    os << "[ " << t.toString() << "{}";
  } else if (nd == 1) {
    int64_t n = t.size(0);
    if (n > 0) {
      auto [scale, sz] = print_format(os, p, n);
      if (scale != 1) print_scale(os, scale);
      for (int64_t i = 0; i < n; ++i) os << std::setw(int(sz)) << p[i] / scale << std::endl;
    }
    os << "[ " << t.toString() << "{" << n << "}";
  } else if (nd == 2) {
    if (t.numel() > 0) print_matrix(os, p, t.size(0), t.size(1), kLineSize, 0);
    os << "[ " << t.toString() << "{" << t.size(0) << "," << t.size(1) << "}";
  } else {
    if (t.numel() > 0) print_blocks(os, p, t.sizes(), kLineSize);
    os << "[ " << t.toString() << "{" << t.size(0);
    for (int64_t i = 1; i < nd; ++i) os << "," << t.size(i);
    os << "}";
  }
  os << " ]";
  return os;
}

}  // namespace ember
