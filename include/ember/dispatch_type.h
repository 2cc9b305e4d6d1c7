#pragma once
/// EMBER_DISPATCH_*: run a generic lambda with `scalar_t` bound to the C++ type of a dtype.
/// Kept out of the public umbrella header; used by kernels and op implementations.

#include "ember/dtype.h"
#include "ember/error.h"

#define EMBER_PRIVATE_CASE(ST, T, ...) \
  case ::ember::ScalarType::ST: {      \
    using scalar_t = T;                \
    return __VA_ARGS__();              \
  }

#define EMBER_PRIVATE_CASES_INT(...)                   \
  EMBER_PRIVATE_CASE(Byte, uint8_t, __VA_ARGS__)       \
  EMBER_PRIVATE_CASE(Char, int8_t, __VA_ARGS__)        \
  EMBER_PRIVATE_CASE(Short, int16_t, __VA_ARGS__)      \
  EMBER_PRIVATE_CASE(Int, int32_t, __VA_ARGS__)        \
  EMBER_PRIVATE_CASE(Long, int64_t, __VA_ARGS__)
#define EMBER_PRIVATE_CASES_FLOAT(...)                      \
  EMBER_PRIVATE_CASE(Half, ::ember::Half, __VA_ARGS__)       \
  EMBER_PRIVATE_CASE(BFloat16, ::ember::BFloat16, __VA_ARGS__) \
  EMBER_PRIVATE_CASE(Float, float, __VA_ARGS__)             \
  EMBER_PRIVATE_CASE(Double, double, __VA_ARGS__)
#define EMBER_PRIVATE_CASES_COMPLEX(...)                                  \
  EMBER_PRIVATE_CASE(ComplexFloat, ::ember::complex<float>, __VA_ARGS__)  \
  EMBER_PRIVATE_CASE(ComplexDouble, ::ember::complex<double>, __VA_ARGS__)

#define EMBER_PRIVATE_DISPATCH_DEFAULT(TYPE, NAME)                                          \
  default:                                                                                  \
    EMBER_THROW(::ember::Error, "[", NAME, "] not implemented for dtype ", TYPE);

/// All 12 dtypes.
#define EMBER_DISPATCH_ALL_TYPES(TYPE, NAME, ...)        \
  [&] {                                                 \
    switch (TYPE) {                                     \
      EMBER_PRIVATE_CASE(Bool, bool, __VA_ARGS__)       \
      EMBER_PRIVATE_CASES_INT(__VA_ARGS__)              \
      EMBER_PRIVATE_CASES_FLOAT(__VA_ARGS__)            \
      EMBER_PRIVATE_CASES_COMPLEX(__VA_ARGS__)          \
      EMBER_PRIVATE_DISPATCH_DEFAULT(TYPE, NAME)        \
    }                                                   \
  }()

/// Every dtype but complex.
#define EMBER_DISPATCH_REAL_TYPES_AND_BOOL(TYPE, NAME, ...) \
  [&] {                                                    \
    switch (TYPE) {                                        \
      EMBER_PRIVATE_CASE(Bool, bool, __VA_ARGS__)          \
      EMBER_PRIVATE_CASES_INT(__VA_ARGS__)                 \
      EMBER_PRIVATE_CASES_FLOAT(__VA_ARGS__)               \
      EMBER_PRIVATE_DISPATCH_DEFAULT(TYPE, NAME)           \
    }                                                      \
  }()

/// Integers and floats (no bool, no complex).
#define EMBER_DISPATCH_REAL_TYPES(TYPE, NAME, ...) \
  [&] {                                           \
    switch (TYPE) {                               \
      EMBER_PRIVATE_CASES_INT(__VA_ARGS__)        \
      EMBER_PRIVATE_CASES_FLOAT(__VA_ARGS__)      \
      EMBER_PRIVATE_DISPATCH_DEFAULT(TYPE, NAME)  \
    }                                             \
  }()

/// Floats and complex.
#define EMBER_DISPATCH_FLOATING_AND_COMPLEX_TYPES(TYPE, NAME, ...) \
  [&] {                                                          \
    switch (TYPE) {                                              \
      EMBER_PRIVATE_CASES_FLOAT(__VA_ARGS__)                     \
      EMBER_PRIVATE_CASES_COMPLEX(__VA_ARGS__)                   \
      EMBER_PRIVATE_DISPATCH_DEFAULT(TYPE, NAME)                 \
    }                                                            \
  }()

/// Floats only.
#define EMBER_DISPATCH_FLOATING_TYPES(TYPE, NAME, ...) \
  [&] {                                               \
    switch (TYPE) {                                   \
      EMBER_PRIVATE_CASES_FLOAT(__VA_ARGS__)          \
      EMBER_PRIVATE_DISPATCH_DEFAULT(TYPE, NAME)      \
    }                                                 \
  }()

/// Bool and integers.
#define EMBER_DISPATCH_INTEGRAL_TYPES_AND_BOOL(TYPE, NAME, ...) \
  [&] {                                                        \
    switch (TYPE) {                                            \
      EMBER_PRIVATE_CASE(Bool, bool, __VA_ARGS__)              \
      EMBER_PRIVATE_CASES_INT(__VA_ARGS__)                     \
      EMBER_PRIVATE_DISPATCH_DEFAULT(TYPE, NAME)               \
    }                                                          \
  }()
