#pragma once
// Compile-time traits of ember's element types, shared by the op and kernel files.

#include <type_traits>

#include "ember/dtype.h"

namespace ember {

/// Whether T is complex<float> or complex<double>.
template <class T>
inline constexpr bool is_complex_v = false;
template <class T>
inline constexpr bool is_complex_v<complex<T>> = true;

/// The real type of T (T itself when T is real).
template <class T>
struct real_of {
  using type = T;
};
template <class T>
struct real_of<complex<T>> {
  using type = T;
};

}  // namespace ember
