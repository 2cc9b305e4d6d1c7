// einsum: the equation is parsed into labels, every operand is brought to one aligned layout
// (ellipsis dims first, then the labels in ASCII order, size 1 where absent; repeated labels
// become diagonals), and operands are contracted pairwise, each pair as one bmm through
// permute + reshape. Dims no longer needed are summed as early as possible.
#include <algorithm>
#include <array>
#include <string>

#include "core/tensor_util.h"
#include "ember/blas.h"
#include "ember/factory.h"
#include "ember/ops.h"
#include "ops/call_path.h"

namespace ember {
namespace {

constexpr int kLabels = 52;

int label_index(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
  return -1;
}
char label_char(int i) { return i < 26 ? char('A' + i) : char('a' + i - 26); }

/// One term of the equation: labels in order with -1 standing for the ellipsis.
struct Term {
  std::vector<int> labels;
  bool ellipsis = false;
};

Term parse_term(std::string_view s, const char* where) {
  Term t;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == ' ') continue;
    if (c == '.') {
      EMBER_CHECK(!t.ellipsis && s.substr(i, 3) == "...", "[einsum] found '.' for ", where,
                  " that is not part of any ellipsis");
      t.ellipsis = true;
      t.labels.push_back(-1);
      i += 2;
      continue;
    }
    const int l = label_index(c);
    EMBER_CHECK(l >= 0, "[einsum] invalid subscript given at index ", i,
                " in the equation "
                "string, subscripts must be in [a-zA-Z]");
    t.labels.push_back(l);
  }
  return t;
}

/// Sums `x` (aligned) over `dims`, keeping them as size-1 dims (an mv against ones).
Tensor sum_keep(const Tensor& x, const std::vector<int64_t>& dims) {
  if (dims.empty()) return x;
  const int64_t nd = x.dim();
  std::vector<bool> is_sum(size_t(nd), false);
  for (int64_t d : dims) is_sum[size_t(d)] = true;
  DimVector perm, kept_sizes, out_sizes;
  int64_t rows = 1, cols = 1;
  for (int64_t d = 0; d < nd; ++d)
    if (!is_sum[size_t(d)]) {
      perm.push_back(d);
      rows *= x.size(d);
    }
  for (int64_t d : dims) {
    perm.push_back(d);
    cols *= x.size(d);
  }
  Tensor y = x.permute(perm).reshape({rows, cols});
  Tensor r = mv(y, ones({cols}, TensorOptions().dtype(x.dtype())));
  for (int64_t d = 0; d < nd; ++d) out_sizes.push_back(is_sum[size_t(d)] ? 1 : x.size(d));
  // r holds the kept dims in order; the summed dims are size 1, so a reshape places them.
  return r.reshape(out_sizes);
}

/// Contracts aligned operands a and b; `keep[d]` says dim d is still needed afterwards.
Tensor contract_pair(Tensor a, Tensor b, const std::vector<bool>& keep) {
  const int64_t nd = a.dim();
  std::vector<int64_t> sum_a, sum_b;
  for (int64_t d = 0; d < nd; ++d) {
    if (keep[size_t(d)]) continue;
    const bool ha = a.size(d) != 1, hb = b.size(d) != 1;
    if (ha && !hb) sum_a.push_back(d);
    if (hb && !ha) sum_b.push_back(d);
  }
  a = sum_keep(a, sum_a);
  b = sum_keep(b, sum_b);
  DimVector batch, lo, ro, sum, rest;
  int64_t nb = 1, nl = 1, nr = 1, nk = 1;
  for (int64_t d = 0; d < nd; ++d) {
    const int64_t sa = a.size(d), sb = b.size(d);
    if (keep[size_t(d)]) {
      if (sa != 1 && sb != 1) {
        batch.push_back(d);
        nb *= sa;
      } else if (sa != 1) {
        lo.push_back(d);
        nl *= sa;
      } else if (sb != 1) {
        ro.push_back(d);
        nr *= sb;
      } else {
        rest.push_back(d);
      }
    } else if (sa != 1 && sb != 1) {
      sum.push_back(d);
      nk *= sa;
    } else {
      rest.push_back(d);
    }
  }
  DimVector pa = batch, pb = batch;
  for (int64_t d : lo) pa.push_back(d);
  for (int64_t d : sum) pa.push_back(d);
  for (int64_t d : ro) pa.push_back(d);
  for (int64_t d : rest) pa.push_back(d);
  for (int64_t d : sum) pb.push_back(d);
  for (int64_t d : ro) pb.push_back(d);
  for (int64_t d : lo) pb.push_back(d);
  for (int64_t d : rest) pb.push_back(d);
  Tensor c = bmm(a.permute(pa).reshape({nb, nl, nk}), b.permute(pb).reshape({nb, nk, nr}));
  // c is [batch..., lo..., ro...]; put every dim back at its aligned position.
  DimVector order = batch, csizes;
  for (int64_t d : lo) order.push_back(d);
  for (int64_t d : ro) order.push_back(d);
  for (int64_t d : sum) order.push_back(d);
  for (int64_t d : rest) order.push_back(d);
  for (int64_t d : batch) csizes.push_back(a.size(d));
  for (int64_t d : lo) csizes.push_back(a.size(d));
  for (int64_t d : ro) csizes.push_back(b.size(d));
  for (size_t i = csizes.size(); i < size_t(nd); ++i) csizes.push_back(1);
  DimVector inv(static_cast<size_t>(nd));
  for (int64_t i = 0; i < nd; ++i) inv[size_t(order[size_t(i)])] = i;
  return c.reshape(csizes).permute(inv);
}

}  // namespace

Tensor einsum(std::string_view equation, ArrayRef<Tensor> tensors) {
  EMBER_OP_CAST(einsum, einsum, equation, tensors);
  const size_t arrow = equation.find("->");
  std::string_view lhs = equation.substr(0, arrow);
  std::vector<Term> terms;
  size_t start = 0;
  while (true) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(parse_term(
        lhs.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start),
        "an operand"));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  EMBER_CHECK(!tensors.empty(), "[einsum] must provide at least one operand");
  EMBER_CHECK(terms.size() <= tensors.size(),
              "[einsum] fewer operands were provided than specified in the equation (",
              tensors.size(), " < ", terms.size(), ")");
  EMBER_CHECK(terms.size() >= tensors.size(),
              "[einsum] more operands were provided than specified in the equation (",
              tensors.size(), " > ", terms.size(), ")");
  const size_t n = tensors.size();

  // Ellipsis width per operand and overall.
  int64_t ell = 0;
  std::vector<int64_t> ell_n(n, 0);
  std::array<int, kLabels> count{};
  for (size_t i = 0; i < n; ++i) {
    const int64_t named = int64_t(terms[i].labels.size()) - (terms[i].ellipsis ? 1 : 0);
    const int64_t nd = tensors[i].dim();
    if (terms[i].ellipsis) {
      EMBER_CHECK(nd >= named, "[einsum] the number of subscripts in the equation (", named,
                  ") is more than the number of dimensions (", nd, ") for operand ", i);
      ell_n[i] = nd - named;
      ell = std::max(ell, ell_n[i]);
    } else {
      EMBER_CHECK(nd == named, "[einsum] the number of subscripts in the equation (", named,
                  ") does not match the number of dimensions (", nd, ") for operand ", i,
                  " and no ellipsis was given");
    }
    for (int l : terms[i].labels)
      if (l >= 0) ++count[size_t(l)];
  }
  // Aligned positions: ellipsis dims, then used labels in ASCII order.
  std::array<int64_t, kLabels> pos;
  pos.fill(-1);
  int64_t nd = ell;
  for (int l = 0; l < kLabels; ++l)
    if (count[size_t(l)] > 0) pos[size_t(l)] = nd++;

  auto dim_name = [&](int64_t d) {
    if (d < ell) return std::string("...");
    for (int l = 0; l < kLabels; ++l)
      if (pos[size_t(l)] == d) return std::string(1, label_char(l));
    return std::string("?");
  };

  // Output: given, or ellipsis then the labels seen exactly once in ASCII order.
  DimVector out_dims;
  std::vector<bool> in_out(size_t(nd), false);
  if (arrow != std::string_view::npos) {
    Term ot = parse_term(equation.substr(arrow + 2), "the output");
    std::array<bool, kLabels> seen{};
    for (int l : ot.labels) {
      if (l < 0) {
        for (int64_t j = 0; j < ell; ++j) out_dims.push_back(j);
        continue;
      }
      EMBER_CHECK(!seen[size_t(l)], "[einsum] output subscript ", label_char(l),
                  " appears more than once in the output");
      EMBER_CHECK(count[size_t(l)] > 0, "[einsum] output subscript ", label_char(l),
                  " does not appear in the equation for any input operand");
      seen[size_t(l)] = true;
      out_dims.push_back(pos[size_t(l)]);
    }
  } else {
    for (int64_t j = 0; j < ell; ++j) out_dims.push_back(j);
    for (int l = 0; l < kLabels; ++l)
      if (count[size_t(l)] == 1) out_dims.push_back(pos[size_t(l)]);
  }
  for (int64_t d : out_dims) in_out[size_t(d)] = true;

  // Align every operand: diagonals for repeated labels, permute, size-1 dims where absent.
  std::vector<Tensor> ops;
  DimVector seen_size(static_cast<size_t>(nd), 1);
  for (size_t i = 0; i < n; ++i) {
    Tensor t = tensors[i];
    std::vector<int64_t> where;  // aligned position of each current dim
    for (int l : terms[i].labels) {
      if (l < 0) {
        for (int64_t j = 0; j < ell_n[i]; ++j) where.push_back(ell - ell_n[i] + j);
      } else {
        where.push_back(pos[size_t(l)]);
      }
    }
    for (bool again = true; again;) {
      again = false;
      for (size_t p = 0; p < where.size() && !again; ++p)
        for (size_t q = p + 1; q < where.size() && !again; ++q)
          if (where[p] == where[q] && where[p] >= ell) {
            EMBER_CHECK(t.size(int64_t(p)) == t.size(int64_t(q)), "[einsum] subscript ",
                        dim_name(where[p]), " is repeated for operand ", i,
                        " but the sizes don't match, ", t.size(int64_t(p)),
                        " != ", t.size(int64_t(q)));
            t = t.diagonal(0, int64_t(p), int64_t(q));
            const int64_t w = where[p];
            where.erase(where.begin() + int64_t(q));
            where.erase(where.begin() + int64_t(p));
            where.push_back(w);
            again = true;
          }
    }
    DimVector perm(static_cast<size_t>(where.size()));
    for (size_t j = 0; j < where.size(); ++j) perm[j] = int64_t(j);
    std::sort(perm.begin(), perm.end(),
              [&](int64_t x, int64_t y) { return where[size_t(x)] < where[size_t(y)]; });
    t = t.permute(perm);
    DimVector sizes(static_cast<size_t>(nd), 1);
    for (size_t j = 0; j < perm.size(); ++j) {
      const int64_t w = where[size_t(perm[j])];
      sizes[size_t(w)] = t.size(int64_t(j));
    }
    for (int64_t d = 0; d < nd; ++d) {
      const int64_t s = sizes[size_t(d)];
      if (s == 1) continue;
      if (seen_size[size_t(d)] == 1) {
        seen_size[size_t(d)] = s;
      } else {
        EMBER_CHECK(seen_size[size_t(d)] == s, "[einsum] subscript ", dim_name(d), " has size ", s,
                    " for operand ", i, " which does not broadcast with previously seen size ",
                    seen_size[size_t(d)]);
      }
    }
    // Absent labels become size-1 dims: unsqueeze (a recorded view with a cheap backward).
    std::vector<bool> present(static_cast<size_t>(nd), false);
    for (size_t j = 0; j < perm.size(); ++j) present[size_t(where[size_t(perm[j])])] = true;
    for (int64_t d = 0; d < nd; ++d) {
      if (!present[size_t(d)]) t = t.unsqueeze(d);
    }
    ops.push_back(t);
  }

  // Which aligned dims an operand set still needs: output dims and dims of other operands.
  auto needed = [&](size_t skip_a, size_t skip_b) {
    std::vector<bool> keep = in_out;
    for (size_t j = 0; j < ops.size(); ++j) {
      if (j == skip_a || j == skip_b) continue;
      for (int64_t d = 0; d < nd; ++d)
        if (ops[j].size(d) != 1) keep[size_t(d)] = true;
    }
    return keep;
  };
  while (ops.size() > 1) {
    size_t bi = 0, bj = 1;
    if (ops.size() > 2) {
      // Greedy order: the pair whose result is smallest.
      double best = -1;
      for (size_t i = 0; i < ops.size(); ++i)
        for (size_t j = i + 1; j < ops.size(); ++j) {
          std::vector<bool> keep = needed(i, j);
          double size = 1;
          for (int64_t d = 0; d < nd; ++d)
            if (keep[size_t(d)]) size *= double(std::max(ops[i].size(d), ops[j].size(d)));
          if (best < 0 || size < best) {
            best = size;
            bi = i;
            bj = j;
          }
        }
    }
    Tensor c = contract_pair(ops[bi], ops[bj], needed(bi, bj));
    ops.erase(ops.begin() + int64_t(bj));
    ops[bi] = c;
  }
  Tensor r = ops[0];
  std::vector<int64_t> rest_sum;
  for (int64_t d = 0; d < nd; ++d)
    if (!in_out[size_t(d)] && r.size(d) != 1) rest_sum.push_back(d);
  r = sum_keep(r, rest_sum);
  DimVector perm = out_dims, out_sizes;
  for (int64_t d : out_dims) out_sizes.push_back(r.size(d));
  for (int64_t d = 0; d < nd; ++d)
    if (!in_out[size_t(d)]) perm.push_back(d);
  return r.permute(perm).reshape(out_sizes);
}

}  // namespace ember
