// Every elementwise op against the PyTorch oracle (tests/oracle/gen_elementwise.py writes the
// cases at build time; the fixture format is documented there).
//
// One test instance per op (Elementwise/OracleOps.Matches/<op>). Each replays all of that op's
// cases: builds the inputs from their recorded bytes and layout recipe (contiguous, .t(),
// stepped slice, expand), calls the op through the table below in the recorded call form
// (function, method, in-place, out=, operator), and checks dtype, shape and values within the
// case's tolerance, or the exception type. The table must name every op the fixture names; an
// op without cases fails too.
//
// Environment: EMBER_ORACLE_MAX_REPORT=<n> (failures printed in full per op, default 8),
// EMBER_ORACLE_TRACE=1 (print each case before running it, to find a crashing case),
// EMBER_ORACLE_DIR=<dir> (read the fixtures from another folder).

#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "oracle_reader.h"

namespace {

using ember::Scalar;
using ember::Tensor;
using ember::oracle::ArgRec;
using ember::oracle::CaseRec;
using ember::oracle::FixtureError;

/// The materialised arguments of one case, with typed accessors that throw FixtureError when
/// the fixture's argument kind does not fit the call.
class Args {
 public:
  explicit Args(const CaseRec& c) : c_(c), t_(c.args.size()), base_(c.args.size()) {
    for (size_t i = 0; i < c.args.size(); ++i) {
      if (c.args[i].kind == 'T') t_[i] = ember::oracle::materialize(c.args[i].t, &base_[i]);
    }
  }
  size_t size() const { return c_.args.size(); }
  bool isT(size_t i) const { return kind(i) == 'T'; }
  bool isS(size_t i) const { return kind(i) == 'S'; }
  bool isN(size_t i) const { return kind(i) == 'N'; }
  Tensor& T(size_t i) {
    expect(i, 'T');
    return t_[i];
  }
  const Tensor& base(size_t i) const { return base_[i]; }
  const Scalar& S(size_t i) const {
    expect(i, 'S');
    return c_.args[i].s;
  }
  std::optional<Scalar> optS(size_t i) const {
    if (isN(i)) return std::nullopt;
    return S(i);
  }
  std::optional<Tensor> optT(size_t i) {
    if (isN(i)) return std::nullopt;
    return T(i);
  }
  double D(size_t i) const {
    expect(i, 'D');
    return c_.args[i].d;
  }
  std::optional<double> optD(size_t i) const {
    if (isN(i)) return std::nullopt;
    return D(i);
  }
  int64_t I(size_t i) const {
    expect(i, 'I');
    return c_.args[i].i;
  }
  bool B(size_t i) const {
    expect(i, 'B');
    return c_.args[i].b;
  }
  std::string_view Str(size_t i) const {
    expect(i, 'Z');
    return c_.args[i].str;
  }
  std::optional<std::string_view> optStr(size_t i) const {
    if (isN(i)) return std::nullopt;
    return Str(i);
  }
  void arity(size_t n) const {
    if (size() != n) throw FixtureError("expected " + std::to_string(n) + " arguments");
  }

 private:
  char kind(size_t i) const {
    if (i >= c_.args.size()) throw FixtureError("argument " + std::to_string(i) + " missing");
    return c_.args[i].kind;
  }
  void expect(size_t i, char k) const {
    if (kind(i) != k) {
      throw FixtureError("argument " + std::to_string(i) + " is '" + c_.args[i].kind +
                         "', the call needs '" + k + "'");
    }
  }
  const CaseRec& c_;
  std::vector<Tensor> t_, base_;
};

using OpFn = Tensor (*)(const std::string& variant, Args& a);

[[noreturn]] void unsupported(const std::string& variant) {
  throw FixtureError("the op table has no call form '" + variant + "' for these arguments");
}

/// `a OP b` for the ops with C++ operators (and -x, ~x).
Tensor call_operator(std::string_view op, Args& a) {
  if (op == "neg") return -a.T(0);
  if (op == "bitwise_not") return ~a.T(0);
#define EMBER_ORACLE_SYM(name, sym)                     \
  if (op == #name) {                                    \
    if (a.isT(0) && a.isT(1)) return a.T(0) sym a.T(1); \
    if (a.isT(0)) return a.T(0) sym a.S(1);             \
    return a.S(0) sym a.T(1);                           \
  }
  EMBER_ORACLE_SYM(add, +)
  EMBER_ORACLE_SYM(sub, -)
  EMBER_ORACLE_SYM(mul, *)
  EMBER_ORACLE_SYM(div, /)
  EMBER_ORACLE_SYM(remainder, %)
  EMBER_ORACLE_SYM(bitwise_and, &)
  EMBER_ORACLE_SYM(bitwise_or, |)
  EMBER_ORACLE_SYM(bitwise_xor, ^)
  EMBER_ORACLE_SYM(bitwise_left_shift, <<)
  EMBER_ORACLE_SYM(bitwise_right_shift, >>)
  EMBER_ORACLE_SYM(eq, ==)
  EMBER_ORACLE_SYM(ne, !=)
  EMBER_ORACLE_SYM(lt, <)
  EMBER_ORACLE_SYM(le, <=)
  EMBER_ORACLE_SYM(gt, >)
  EMBER_ORACLE_SYM(ge, >=)
#undef EMBER_ORACLE_SYM
  unsupported("operator");
}

/// `a OP= b`.
Tensor call_ioperator(std::string_view op, Args& a) {
#define EMBER_ORACLE_ISYM(name, sym)        \
  if (op == #name) {                        \
    if (a.isT(1)) return a.T(0) sym a.T(1); \
    return a.T(0) sym a.S(1);               \
  }
#define EMBER_ORACLE_ISYM_T(name, sym) \
  if (op == #name) return a.T(0) sym a.T(1);
  EMBER_ORACLE_ISYM(add, +=)
  EMBER_ORACLE_ISYM(sub, -=)
  EMBER_ORACLE_ISYM(mul, *=)
  EMBER_ORACLE_ISYM(div, /=)
  EMBER_ORACLE_ISYM_T(bitwise_and, &=)
  EMBER_ORACLE_ISYM_T(bitwise_or, |=)
  EMBER_ORACLE_ISYM_T(bitwise_xor, ^=)
#undef EMBER_ORACLE_ISYM
#undef EMBER_ORACLE_ISYM_T
  unsupported("ioperator");
}

/// op name -> how to call it. Built from the op_list.h X-macros, so a new op in those lists gets
/// an entry here automatically; the parameterised ops of ops.h are listed by hand.
const std::map<std::string, OpFn>& op_table() {
  static const std::map<std::string, OpFn> table = [] {
    std::map<std::string, OpFn> m;
#define EMBER_ORACLE_UNARY(op)                              \
  m[#op] = [](const std::string& v, Args& a) -> Tensor {    \
    if (v == "fn") return ember::op(a.T(0));                \
    if (v == "method") return a.T(0).op();                  \
    if (v == "inplace") return a.T(0).op##_();              \
    if (v == "inplace_fn") return ember::op##_(a.T(0));     \
    if (v == "out") return ember::op##_out(a.T(0), a.T(1)); \
    if (v == "operator") return call_operator(#op, a);      \
    unsupported(v);                                         \
  };
    EMBER_UNARY_OPS(EMBER_ORACLE_UNARY)
#undef EMBER_ORACLE_UNARY

#define EMBER_ORACLE_PRED(op)                               \
  m[#op] = [](const std::string& v, Args& a) -> Tensor {    \
    if (v == "fn") return ember::op(a.T(0));                \
    if (v == "method") return a.T(0).op();                  \
    if (v == "out") return ember::op##_out(a.T(0), a.T(1)); \
    unsupported(v);                                         \
  };
    EMBER_UNARY_PREDICATE_OPS(EMBER_ORACLE_PRED)
#undef EMBER_ORACLE_PRED

#define EMBER_ORACLE_BINARY(op)                                                        \
  m[#op] = [](const std::string& v, Args& a) -> Tensor {                               \
    if (v == "fn") {                                                                   \
      a.arity(2);                                                                      \
      if (a.isT(0) && a.isT(1)) return ember::op(a.T(0), a.T(1));                      \
      if (a.isT(0)) return ember::op(a.T(0), a.S(1));                                  \
      return ember::op(a.S(0), a.T(1));                                                \
    }                                                                                  \
    if (v == "method") return a.isT(1) ? a.T(0).op(a.T(1)) : a.T(0).op(a.S(1));        \
    if (v == "inplace") return a.isT(1) ? a.T(0).op##_(a.T(1)) : a.T(0).op##_(a.S(1)); \
    if (v == "out") {                                                                  \
      a.arity(3);                                                                      \
      if (a.isT(2)) return ember::op##_out(a.T(0), a.T(1), a.T(2));                    \
      return ember::op##_out(a.T(0), a.T(1), a.S(2));                                  \
    }                                                                                  \
    if (v == "operator") return call_operator(#op, a);                                 \
    if (v == "ioperator") return call_ioperator(#op, a);                               \
    unsupported(v);                                                                    \
  };
    EMBER_BINARY_OPS(EMBER_ORACLE_BINARY)
    EMBER_COMPARISON_OPS(EMBER_ORACLE_BINARY)
#undef EMBER_ORACLE_BINARY

    // add / sub: (a, b, alpha); the scalar-first form exists only as an operator.
#define EMBER_ORACLE_ALPHA(op)                                                                 \
  m[#op] = [](const std::string& v, Args& a) -> Tensor {                                       \
    if (v == "operator") return call_operator(#op, a);                                         \
    if (v == "ioperator") return call_ioperator(#op, a);                                       \
    if (v == "out") return ember::op##_out(a.T(0), a.T(1), a.T(2), a.S(3));                    \
    a.arity(3);                                                                                \
    if (v == "fn") {                                                                           \
      return a.isT(1) ? ember::op(a.T(0), a.T(1), a.S(2)) : ember::op(a.T(0), a.S(1), a.S(2)); \
    }                                                                                          \
    if (v == "method") {                                                                       \
      return a.isT(1) ? a.T(0).op(a.T(1), a.S(2)) : a.T(0).op(a.S(1), a.S(2));                 \
    }                                                                                          \
    if (v == "inplace") {                                                                      \
      return a.isT(1) ? a.T(0).op##_(a.T(1), a.S(2)) : a.T(0).op##_(a.S(1), a.S(2));           \
    }                                                                                          \
    unsupported(v);                                                                            \
  };
    EMBER_ORACLE_ALPHA(add)
    EMBER_ORACLE_ALPHA(sub)
#undef EMBER_ORACLE_ALPHA

    m["div"] = [](const std::string& v, Args& a) -> Tensor {
      if (v == "operator") return call_operator("div", a);
      if (v == "ioperator") return call_ioperator("div", a);
      if (v == "out") return ember::div_out(a.T(0), a.T(1), a.T(2), a.optStr(3));
      a.arity(3);
      if (v == "fn") {
        return a.isT(1) ? ember::div(a.T(0), a.T(1), a.optStr(2))
                        : ember::div(a.T(0), a.S(1), a.optStr(2));
      }
      if (v == "method") {
        return a.isT(1) ? a.T(0).div(a.T(1), a.optStr(2)) : a.T(0).div(a.S(1), a.optStr(2));
      }
      if (v == "inplace") {
        return a.isT(1) ? a.T(0).div_(a.T(1), a.optStr(2)) : a.T(0).div_(a.S(1), a.optStr(2));
      }
      unsupported(v);
    };
    m["round"] = [](const std::string& v, Args& a) -> Tensor {
      if (v == "fn") return ember::round(a.T(0), a.I(1));
      if (v == "method") return a.T(0).round(a.I(1));
      if (v == "inplace") return a.T(0).round_(a.I(1));
      if (v == "out") return ember::round_out(a.T(0), a.T(1), a.I(2));
      unsupported(v);
    };
    m["clamp"] = [](const std::string& v, Args& a) -> Tensor {
      const size_t x = v == "out" ? 1 : 0;  // index of self
      const bool tensor_bounds = a.isT(x + 1) || a.isT(x + 2);
      if (tensor_bounds) {
        std::optional<Tensor> lo = a.optT(x + 1), hi = a.optT(x + 2);
        if (v == "fn") return ember::clamp(a.T(0), lo, hi);
        if (v == "method") return a.T(0).clamp(lo, hi);
        if (v == "inplace") return a.T(0).clamp_(lo, hi);
        if (v == "out") return ember::clamp_out(a.T(0), a.T(1), lo, hi);
      } else {
        std::optional<Scalar> lo = a.optS(x + 1), hi = a.optS(x + 2);
        if (v == "fn") return ember::clamp(a.T(0), lo, hi);
        if (v == "method") return a.T(0).clamp(lo, hi);
        if (v == "inplace") return a.T(0).clamp_(lo, hi);
        if (v == "out") return ember::clamp_out(a.T(0), a.T(1), lo, hi);
      }
      unsupported(v);
    };
    m["logit"] = [](const std::string& v, Args& a) -> Tensor {
      if (v == "fn") return ember::logit(a.T(0), a.optD(1));
      if (v == "method") return a.T(0).logit(a.optD(1));
      if (v == "inplace") return a.T(0).logit_(a.optD(1));
      unsupported(v);
    };
    m["nan_to_num"] = [](const std::string& v, Args& a) -> Tensor {
      if (v == "fn") return ember::nan_to_num(a.T(0), a.optD(1), a.optD(2), a.optD(3));
      if (v == "method") return a.T(0).nan_to_num(a.optD(1), a.optD(2), a.optD(3));
      if (v == "inplace") return a.T(0).nan_to_num_(a.optD(1), a.optD(2), a.optD(3));
      unsupported(v);
    };
    m["lerp"] = [](const std::string& v, Args& a) -> Tensor {
      if (a.isT(2)) {
        if (v == "fn") return ember::lerp(a.T(0), a.T(1), a.T(2));
        if (v == "method") return a.T(0).lerp(a.T(1), a.T(2));
        if (v == "inplace") return a.T(0).lerp_(a.T(1), a.T(2));
      } else {
        if (v == "fn") return ember::lerp(a.T(0), a.T(1), a.S(2));
        if (v == "method") return a.T(0).lerp(a.T(1), a.S(2));
        if (v == "inplace") return a.T(0).lerp_(a.T(1), a.S(2));
      }
      unsupported(v);
    };
#define EMBER_ORACLE_ADDC(op)                                        \
  m[#op] = [](const std::string& v, Args& a) -> Tensor {             \
    if (v == "fn") return ember::op(a.T(0), a.T(1), a.T(2), a.S(3)); \
    if (v == "method") return a.T(0).op(a.T(1), a.T(2), a.S(3));     \
    if (v == "inplace") return a.T(0).op##_(a.T(1), a.T(2), a.S(3)); \
    unsupported(v);                                                  \
  };
    EMBER_ORACLE_ADDC(addcmul)
    EMBER_ORACLE_ADDC(addcdiv)
#undef EMBER_ORACLE_ADDC
    m["where"] = [](const std::string& v, Args& a) -> Tensor {
      a.arity(3);
      if (v == "fn") {
        if (a.isT(1) && a.isT(2)) return ember::where(a.T(0), a.T(1), a.T(2));
        if (a.isT(2)) return ember::where(a.T(0), a.S(1), a.T(2));
        if (a.isT(1)) return ember::where(a.T(0), a.T(1), a.S(2));
        return ember::where(a.T(0), a.S(1), a.S(2));
      }
      if (v == "method") return a.T(1).where(a.T(0), a.T(2));
      unsupported(v);
    };
    m["isclose"] = [](const std::string& v, Args& a) -> Tensor {
      if (v == "fn") return ember::isclose(a.T(0), a.T(1), a.D(2), a.D(3), a.B(4));
      if (v == "method") return a.T(0).isclose(a.T(1), a.D(2), a.D(3), a.B(4));
      unsupported(v);
    };
    m["leaky_relu"] = [](const std::string& v, Args& a) -> Tensor {
      if (v == "fn") return ember::leaky_relu(a.T(0), a.S(1));
      if (v == "inplace_fn") return ember::leaky_relu_(a.T(0), a.S(1));
      unsupported(v);
    };
    m["elu"] = [](const std::string& v, Args& a) -> Tensor {
      if (v == "fn") return ember::elu(a.T(0), a.S(1), a.S(2), a.S(3));
      if (v == "inplace_fn") return ember::elu_(a.T(0), a.S(1), a.S(2), a.S(3));
      unsupported(v);
    };
    m["celu"] = [](const std::string& v, Args& a) -> Tensor {
      if (v == "fn") return ember::celu(a.T(0), a.S(1));
      if (v == "inplace_fn") return ember::celu_(a.T(0), a.S(1));
      unsupported(v);
    };
    m["gelu"] = [](const std::string& v, Args& a) -> Tensor {
      if (v == "fn") return ember::gelu(a.T(0), a.Str(1));
      if (v == "inplace_fn") return ember::gelu_(a.T(0), a.Str(1));
      unsupported(v);
    };
    m["softplus"] = [](const std::string& v, Args& a) -> Tensor {
      if (v == "fn") return ember::softplus(a.T(0), a.S(1), a.S(2));
      unsupported(v);
    };
    m["hardtanh"] = [](const std::string& v, Args& a) -> Tensor {
      if (v == "fn") return ember::hardtanh(a.T(0), a.S(1), a.S(2));
      if (v == "inplace_fn") return ember::hardtanh_(a.T(0), a.S(1), a.S(2));
      unsupported(v);
    };
    m["hardshrink"] = [](const std::string& v, Args& a) -> Tensor {
      if (v == "fn") return ember::hardshrink(a.T(0), a.S(1));
      unsupported(v);
    };
    m["softshrink"] = [](const std::string& v, Args& a) -> Tensor {
      if (v == "fn") return ember::softshrink(a.T(0), a.S(1));
      unsupported(v);
    };
    m["threshold"] = [](const std::string& v, Args& a) -> Tensor {
      if (v == "fn") return ember::threshold(a.T(0), a.S(1), a.S(2));
      if (v == "inplace_fn") return ember::threshold_(a.T(0), a.S(1), a.S(2));
      unsupported(v);
    };
    return m;
  }();
  return table;
}

std::vector<std::string> table_op_names() {
  std::vector<std::string> names;
  for (auto& [name, fn] : op_table()) names.push_back(name);
  return names;
}

bool writes_first_arg(const std::string& variant) {
  return variant == "inplace" || variant == "inplace_fn" || variant == "ioperator" ||
         variant == "out";
}

/// Runs one case; returns "" on success, else "<category>: <details>". FixtureError escapes.
std::string run_case(const CaseRec& c, OpFn fn) {
  std::optional<Args> made;
  try {
    made.emplace(c);  // ember::empty + memcpy, then t() / slice() / expand()
  } catch (const ember::Error& e) {
    return std::string("building the inputs failed: ") + e.what();
  }
  Args& a = *made;
  std::vector<std::vector<uint8_t>> inputs_before;
  for (size_t i = 0; i < a.size(); ++i) {
    inputs_before.push_back(a.isT(i) ? ember::oracle::gather_bytes(a.base(i))
                                     : std::vector<uint8_t>());
  }
  Tensor r;
  try {
    r = fn(c.variant, a);
  } catch (const FixtureError&) {
    throw;
  } catch (const ember::Error& e) {
    if (c.exc.empty()) {
      return std::string("unexpected exception: ") + ember::oracle::kind_name(e.kind()) + ": " +
             std::string(e.what()).substr(0, 300);
    }
    if (!ember::oracle::exception_matches(c.exc, e)) {
      return "wrong exception type: expected " + c.exc + " (torch: " + c.exc_msg + "), got " +
             ember::oracle::kind_name(e.kind()) + ": " + std::string(e.what()).substr(0, 300);
    }
    return "";
  } catch (const std::exception& e) {
    return std::string("non-ember exception: ") + e.what();
  }
  if (!c.exc.empty()) {
    std::string got = r.defined() ? std::string(ember::dtype_name(r.dtype())) : "undefined";
    return "missing exception: expected " + c.exc + " (torch: " + c.exc_msg +
           "), got a result of dtype " + got;
  }
  std::string err;
  if (writes_first_arg(c.variant)) {
    if (!r.defined() || !r.is_same(a.T(0))) {
      return "returned tensor: " + c.variant + " must return args[0] itself";
    }
    err = ember::oracle::compare(a.T(0), *c.result, c.rtol, c.atol, c.signed_zero);
  } else {
    err = ember::oracle::compare(r, *c.result, c.rtol, c.atol, c.signed_zero);
  }
  if (!err.empty()) return err.substr(0, err.find(':')) + " mismatch: " + err;
  if (c.base_after) {
    err = ember::oracle::compare(a.base(0), *c.base_after, c.rtol, c.atol, c.signed_zero);
    if (!err.empty()) return "base of args[0] after the op: " + err;
  }
  // Inputs that are not written must be unchanged (bit for bit).
  for (size_t i = writes_first_arg(c.variant) ? 1 : 0; i < a.size(); ++i) {
    if (a.isT(i) && ember::oracle::gather_bytes(a.base(i)) != inputs_before[i]) {
      return "input modified: argument " + std::to_string(i) + " changed";
    }
  }
  return "";
}

int env_int(const char* name, int dflt) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : dflt;
}

class OracleOps : public ::testing::TestWithParam<std::string> {};

TEST_P(OracleOps, Matches) {
  const std::string& op = GetParam();
  const auto& index = ember::oracle::elementwise_index();
  ASSERT_TRUE(index.count(op) && index.at(op) > 0)
      << "the oracle fixture has no cases for op '" << op << "' (add it to "
      << "tests/oracle/gen_elementwise.py's table)";
  const std::vector<CaseRec>& cases = ember::oracle::elementwise_cases(op);
  const OpFn fn = op_table().at(op);
  const int max_report = env_int("EMBER_ORACLE_MAX_REPORT", 8);
  const bool trace = env_int("EMBER_ORACLE_TRACE", 0) != 0;
  int failed = 0;
  std::map<std::string, int> by_category;
  std::map<std::string, int> by_group;  // "variant form:dtype"
  for (const CaseRec& c : cases) {
    if (trace) std::cerr << "[oracle] " << c.describe() << std::endl;
    std::string err;
    try {
      err = run_case(c, fn);
    } catch (const FixtureError& e) {
      err = std::string("harness: ") + e.what();
    } catch (const std::exception& e) {
      err = std::string("exception while checking the result: ") + e.what();
    }
    if (err.empty()) continue;
    ++failed;
    by_category[err.substr(0, err.find(':'))]++;
    std::string group = c.variant + " " + c.label.substr(0, c.label.rfind(':'));
    by_group[group]++;
    if (failed <= max_report) ADD_FAILURE() << c.describe() << "\n  " << err;
  }
  if (failed) {
    std::ostringstream os;
    os << op << ": " << failed << " of " << cases.size() << " cases failed.\n  by kind:";
    for (auto& [k, n] : by_category) os << " [" << k << "] x" << n;
    os << "\n  by call form and dtype (variant form:dtype -> failures):";
    int shown = 0;
    for (auto& [k, n] : by_group) {
      if (shown++ == 60) {
        os << "\n    ... " << by_group.size() - 60 << " more groups";
        break;
      }
      os << "\n    " << k << " -> " << n;
    }
    ADD_FAILURE() << os.str();
  }
}

INSTANTIATE_TEST_SUITE_P(Elementwise, OracleOps, ::testing::ValuesIn(table_op_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

TEST(OracleFixture, EveryFixtureOpIsInTheTable) {
  std::vector<std::string> missing;
  for (auto& [name, n] : ember::oracle::elementwise_index()) {
    if (!op_table().count(name)) missing.push_back(name);
  }
  EXPECT_TRUE(missing.empty()) << "the fixture names ops that test_ops_oracle.cpp's table lacks: "
                               << ::testing::PrintToString(missing);
}

TEST(OracleFixture, CoversEveryOp) {
  // Every op of op_list.h's four lists and every parameterised op of ops.h must have cases.
  std::vector<std::string> names = {
      "add",  "sub",     "div",      "round",    "clamp",      "logit",      "nan_to_num",
      "lerp", "addcmul", "addcdiv",  "where",    "isclose",    "leaky_relu", "elu",
      "celu", "gelu",    "softplus", "hardtanh", "hardshrink", "softshrink", "threshold"};
#define EMBER_ORACLE_NAME(op) names.push_back(#op);
  EMBER_UNARY_OPS(EMBER_ORACLE_NAME)
  EMBER_UNARY_PREDICATE_OPS(EMBER_ORACLE_NAME)
  EMBER_BINARY_OPS(EMBER_ORACLE_NAME)
  EMBER_COMPARISON_OPS(EMBER_ORACLE_NAME)
#undef EMBER_ORACLE_NAME
  const auto& all = ember::oracle::elementwise_index();
  std::vector<std::string> no_cases, no_entry;
  for (auto& n : names) {
    if (!all.count(n)) no_cases.push_back(n);
    if (!op_table().count(n)) no_entry.push_back(n);
  }
  EXPECT_TRUE(no_cases.empty()) << "ops without oracle cases: "
                                << ::testing::PrintToString(no_cases);
  EXPECT_TRUE(no_entry.empty()) << "ops missing from the call table: "
                                << ::testing::PrintToString(no_entry);
}

}  // namespace
