#pragma once
/// Reader for the oracle fixtures that tests/oracle/gen_*.py write at build time (the record
/// format is documented at the top of tests/oracle/gen_elementwise.py), and the helpers the
/// oracle tests share: building ember tensors from recorded bytes and layout recipes, and
/// comparing results within a tolerance.

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ember/dtype.h"
#include "ember/error.h"
#include "ember/scalar.h"
#include "ember/tensor.h"

namespace ember::oracle {

/// A malformed fixture or a case the harness cannot express. Never an ember::Error, so it can't
/// be mistaken for an expected exception.
class FixtureError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

/// Directory of the generated fixtures: $EMBER_ORACLE_DIR, else the EMBER_ORACLE_DIR compile
/// definition (the build's oracle/ folder).
std::string oracle_dir();

/// Torch's dtype names ("float32", "complex32", ...) to ember's; FixtureError when unknown.
ScalarType dtype_from_name(std::string_view name);
std::vector<uint8_t> hex_decode(std::string_view hex);

/// "T <dtype> <base> <views> <hex>": a contiguous base tensor and a view recipe.
struct TensorRec {
  ScalarType dtype = kFloat;
  std::vector<int64_t> base;
  std::string views;  // "-" or steps joined by '/': "t", "s<d>:<k>", "e<sizes>"
  std::string hex;
  std::string describe() const;
};

/// One argument record: T, S, N, D, I, B or Z.
struct ArgRec {
  char kind = 'N';
  TensorRec t;
  Scalar s;
  double d = 0;
  int64_t i = 0;
  bool b = false;
  std::string str;
  std::string describe() const;
};

/// "R"/"W": dtype, sizes and row-major bytes.
struct ResultRec {
  ScalarType dtype = kFloat;
  std::vector<int64_t> sizes;
  std::string hex;
};

struct CaseRec {
  std::string op, variant, label;
  std::vector<ArgRec> args;
  std::optional<ResultRec> result;      // R
  std::optional<ResultRec> base_after;  // W
  std::string exc, exc_msg;             // X
  double rtol = 0, atol = 0;
  bool signed_zero = false;
  int line = 0;
  /// "op variant label (line N): args".
  std::string describe() const;
};

/// The elementwise fixture's index: op name -> number of cases (<dir>/elementwise.txt).
const std::map<std::string, int>& elementwise_index();
/// The cases of one op (<dir>/elementwise/<op>.txt), in file order; FixtureError when the file is
/// missing, malformed or disagrees with the index. Parsed once per op.
const std::vector<CaseRec>& elementwise_cases(const std::string& op);

/// A fresh ember tensor for `rec`: `base` gets the contiguous base (empty + memcpy), the
/// returned tensor is the view the recipe makes of it.
Tensor materialize(const TensorRec& rec, Tensor* base = nullptr);

/// The elements of `t` (any strides) as raw row-major bytes.
std::vector<uint8_t> gather_bytes(const Tensor& t);

/// Compares `got` with the expected record. Returns "" when they match, else a description of
/// the dtype/shape difference or of the first `max_report` mismatching elements.
std::string compare(const Tensor& got, const ResultRec& exp, double rtol, double atol,
                    bool signed_zero, int max_report = 4);

/// Which ember exception a Python exception class name maps to; whether `e` is one.
bool exception_matches(std::string_view python_name, const ember::Error& e);
const char* kind_name(ErrorKind k);

}  // namespace ember::oracle
