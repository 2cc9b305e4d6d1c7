#pragma once
// Helpers shared by the view and indexing tests: strided reads, geometry checks and an exact
// exception-type check.

#include <gtest/gtest.h>

#include <string>
#include <typeinfo>
#include <vector>

#include "ember/ember.h"

namespace ember_test {

using ember::Tensor;
using V = std::vector<int64_t>;

/// Elements of `t` in row-major order, read through its strides (no contiguous() needed).
template <class T = int64_t>
std::vector<T> values(const Tensor& t) {
  std::vector<T> out;
  if (t.numel() == 0) return out;
  const T* p = t.data_ptr<T>();
  V idx(size_t(t.dim()), 0);
  for (int64_t k = 0; k < t.numel(); ++k) {
    int64_t off = 0;
    for (int64_t d = 0; d < t.dim(); ++d) off += idx[d] * t.strides()[d];
    out.push_back(p[off]);
    for (int64_t d = t.dim() - 1; d >= 0; --d) {
      if (++idx[d] < t.sizes()[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

/// Checks sizes, strides and storage offset at once.
inline void expect_geometry(const Tensor& t, const V& sizes, const V& strides, int64_t offset) {
  EXPECT_EQ(t.sizes().vec(), sizes);
  EXPECT_EQ(t.strides().vec(), strides);
  EXPECT_EQ(t.storage_offset(), offset);
}

/// arange(24) viewed as {2, 3, 4}.
inline Tensor a234() { return ember::arange(24).view({2, 3, 4}); }

}  // namespace ember_test

/// `stmt` throws exactly `ErrT` (not a subclass) with a message starting with `prefix`.
#define EXPECT_EMBER_ERROR(stmt, ErrT, prefix)                                  \
  do {                                                                          \
    try {                                                                       \
      (void)(stmt);                                                             \
      ADD_FAILURE() << "no exception from " #stmt;                              \
    } catch (const ErrT& e) {                                                   \
      EXPECT_TRUE(typeid(e) == typeid(ErrT)) << "got a subclass: " << e.what(); \
      EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << e.what();        \
    } catch (const std::exception& e) {                                         \
      ADD_FAILURE() << "wrong exception type from " #stmt ": " << e.what();     \
    }                                                                           \
  } while (0)
