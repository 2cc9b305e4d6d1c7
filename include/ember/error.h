#pragma once
/// Typed errors and the EMBER_CHECK family of macros (DESIGN.md §7).
///
/// User mistakes throw an `ember::Error` subclass whose message starts with `[op_name]` and names
/// the offending shapes, dtypes and values. The subclass says which Python exception it maps to.
/// `EMBER_INTERNAL_ASSERT` is for ember's own bugs: it throws `InternalError`, never aborts.

#include <sstream>
#include <stdexcept>
#include <string>

namespace ember {

/// Which Python exception an error maps to.
enum class ErrorKind { Runtime, Value, Index, Type, NotImplemented, Internal };

/// Base of every ember exception; a plain `Error` is a RuntimeError.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& msg, ErrorKind kind = ErrorKind::Runtime)
      : std::runtime_error(msg), kind_(kind) {}
  /// The Python exception this error becomes.
  ErrorKind kind() const noexcept { return kind_; }

 private:
  ErrorKind kind_;
};

/// A bad argument value (Python ValueError).
class ValueError : public Error {
 public:
  explicit ValueError(const std::string& m) : Error(m, ErrorKind::Value) {}
};
/// An index or dimension out of range (Python IndexError).
class IndexError : public Error {
 public:
  explicit IndexError(const std::string& m) : Error(m, ErrorKind::Index) {}
};
/// A wrong dtype or argument type (Python TypeError).
class TypeError : public Error {
 public:
  explicit TypeError(const std::string& m) : Error(m, ErrorKind::Type) {}
};
/// A feature not implemented for these arguments (Python NotImplementedError).
class NotImplementedError : public Error {
 public:
  explicit NotImplementedError(const std::string& m) : Error(m, ErrorKind::NotImplemented) {}
};
/// A broken internal invariant: a bug in ember, not in the caller's code.
class InternalError : public Error {
 public:
  explicit InternalError(const std::string& m) : Error(m, ErrorKind::Internal) {}
};

namespace detail {
template <class... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}
[[noreturn]] void throw_internal(const char* cond, const char* file, int line,
                                 const std::string& msg);
}  // namespace detail

}  // namespace ember

/// Throws `ErrType` with the concatenated message parts when `cond` is false.
#define EMBER_CHECK_T(ErrType, cond, ...)                          \
  do {                                                             \
    if (__builtin_expect(!static_cast<bool>(cond), 0)) {           \
      throw ErrType(::ember::detail::str_cat(__VA_ARGS__));        \
    }                                                              \
  } while (0)

/// Runtime-error check: `EMBER_CHECK(a.dim() == 2, "[mm] expected 2-D, got ", a.sizes())`.
#define EMBER_CHECK(cond, ...) EMBER_CHECK_T(::ember::Error, cond, __VA_ARGS__)
#define EMBER_CHECK_VALUE(cond, ...) EMBER_CHECK_T(::ember::ValueError, cond, __VA_ARGS__)
#define EMBER_CHECK_INDEX(cond, ...) EMBER_CHECK_T(::ember::IndexError, cond, __VA_ARGS__)
#define EMBER_CHECK_TYPE(cond, ...) EMBER_CHECK_T(::ember::TypeError, cond, __VA_ARGS__)

/// Throws unconditionally (for `switch` defaults on user input).
#define EMBER_THROW(ErrType, ...) throw ErrType(::ember::detail::str_cat(__VA_ARGS__))

/// Checks an invariant of ember itself; failure means a bug in ember.
#define EMBER_INTERNAL_ASSERT(cond, ...)                                                   \
  do {                                                                                     \
    if (__builtin_expect(!static_cast<bool>(cond), 0)) {                                   \
      ::ember::detail::throw_internal(#cond, __FILE__, __LINE__,                           \
                                      ::ember::detail::str_cat("" __VA_OPT__(, ) __VA_ARGS__)); \
    }                                                                                      \
  } while (0)
