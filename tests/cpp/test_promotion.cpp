// Type promotion against the PyTorch oracle (tests/oracle/gen_promotion.py writes
// <build>/oracle/promotion.txt): torch.promote_types, torch.result_type for tensor/0-dim/scalar
// operand pairs over all 12x12 dtypes, and torch.can_cast, vs ember::promoteTypes,
// ember::result_type and ember::canCast.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "oracle_reader.h"

namespace {

using ember::Scalar;
using ember::ScalarType;
using ember::Tensor;
using ember::oracle::dtype_from_name;

struct Record {
  std::string mode, a, b, expected;
  int line = 0;
};

const std::vector<Record>& records() {
  static const std::vector<Record> recs = [] {
    std::string path = ember::oracle::oracle_dir() + "/promotion.txt";
    std::ifstream in(path);
    if (!in) throw ember::oracle::FixtureError("cannot open " + path);
    std::vector<Record> out;
    std::string line;
    int lineno = 0;
    while (std::getline(in, line)) {
      ++lineno;
      std::istringstream ls(line);
      std::string tag;
      ls >> tag;
      Record r;
      r.line = lineno;
      if (tag == "P") {
        ls >> r.mode >> r.a >> r.b >> r.expected;
      } else if (tag == "C") {
        r.mode = "cc";
        ls >> r.a >> r.b >> r.expected;
      } else {
        continue;  // version
      }
      if (r.expected.empty()) {
        throw ember::oracle::FixtureError(path + ":" + std::to_string(lineno) + ": malformed");
      }
      out.push_back(r);
    }
    return out;
  }();
  return recs;
}

Scalar python_scalar(const std::string& kind) {
  if (kind == "b") return Scalar(true);
  if (kind == "i") return Scalar(int64_t(3));
  if (kind == "f") return Scalar(2.5);
  if (kind == "c") return Scalar(ember::complex<double>(1.5, -0.5));
  throw ember::oracle::FixtureError("bad scalar kind " + kind);
}

Tensor tensor_of(const std::string& dtype, bool zero_dim) {
  ScalarType t = dtype_from_name(dtype);
  return zero_dim ? ember::empty(ember::IntArrayRef(), ember::TensorOptions(t))
                  : ember::empty({2}, ember::TensorOptions(t));
}

/// What ember says for one record, as the name torch uses.
std::string ember_answer(const Record& r) {
  const std::string& m = r.mode;
  ScalarType res;
  if (m == "cc") return ember::canCast(dtype_from_name(r.a), dtype_from_name(r.b)) ? "1" : "0";
  if (m == "pt") {
    res = ember::promoteTypes(dtype_from_name(r.a), dtype_from_name(r.b));
  } else if (m == "tt" || m == "t0" || m == "0t" || m == "00") {
    res = ember::result_type(tensor_of(r.a, m[0] == '0'), tensor_of(r.b, m[1] == '0'));
  } else if (m == "ts" || m == "0s") {
    res = ember::result_type(tensor_of(r.a, m[0] == '0'), python_scalar(r.b));
  } else if (m == "st" || m == "s0") {
    res = ember::result_type(python_scalar(r.a), tensor_of(r.b, m[1] == '0'));
  } else if (m == "ss") {
    res = ember::result_type(python_scalar(r.a), python_scalar(r.b));
  } else {
    throw ember::oracle::FixtureError("unknown promotion mode " + m);
  }
  return ember::dtype_name(res);
}

const char* describe_mode(const std::string& m) {
  if (m == "pt") return "promoteTypes(a, b)";
  if (m == "tt") return "result_type(1-D a, 1-D b)";
  if (m == "t0") return "result_type(1-D a, 0-dim b)";
  if (m == "0t") return "result_type(0-dim a, 1-D b)";
  if (m == "00") return "result_type(0-dim a, 0-dim b)";
  if (m == "ts") return "result_type(1-D a, Scalar b)";
  if (m == "st") return "result_type(Scalar a, 1-D b)";
  if (m == "0s") return "result_type(0-dim a, Scalar b)";
  if (m == "s0") return "result_type(Scalar a, 0-dim b)";
  if (m == "ss") return "result_type(Scalar a, Scalar b)";
  if (m == "cc") return "canCast(a, b)";
  return "?";
}

class PromotionOracle : public ::testing::TestWithParam<std::string> {};

TEST_P(PromotionOracle, Matches) {
  const std::string& mode = GetParam();
  int n = 0, failed = 0;
  for (const Record& r : records()) {
    if (r.mode != mode) continue;
    ++n;
    std::string got;
    try {
      got = ember_answer(r);
    } catch (const ember::Error& e) {
      got = std::string("exception: ") + e.what();
    }
    if (got != r.expected && ++failed <= 24) {
      ADD_FAILURE() << describe_mode(mode) << " with a=" << r.a << " b=" << r.b << ": got " << got
                    << ", torch says " << r.expected << " (promotion.txt line " << r.line << ")";
    }
  }
  EXPECT_GT(n, 0) << "no records for mode " << mode;
  EXPECT_EQ(failed, 0) << describe_mode(mode) << ": " << failed << " of " << n
                       << " pairs disagree with torch";
}

INSTANTIATE_TEST_SUITE_P(Promotion, PromotionOracle,
                         ::testing::Values("pt", "tt", "t0", "0t", "00", "ts", "st", "0s", "s0",
                                           "ss", "cc"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           const std::string& m = info.param;
                           return m == "pt"   ? std::string("promote_types")
                                  : m == "cc" ? std::string("can_cast")
                                              : "result_type_" + m;
                         });

TEST(PromotionOracle, CoversAllPairs) {
  int pairs = 0, casts = 0;
  for (const Record& r : records()) {
    pairs += r.mode == "pt";
    casts += r.mode == "cc";
  }
  EXPECT_EQ(pairs, 144);
  EXPECT_EQ(casts, 144);
}

}  // namespace
