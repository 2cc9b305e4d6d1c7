// Printing: operator<<, toString() and print() against exact strings produced by libtorch 1.13
// (a small program printing the same tensors with Debian's libtorch-dev). See Note [Tensor print
// format] in src/core/print.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <iomanip>
#include <sstream>

#include "ember/ember.h"

using namespace ember;

namespace {

std::string str(const Tensor& t) {
  std::ostringstream os;
  os << t;
  return os.str();
}

}  // namespace

TEST(Print, MatchesLibtorch) {
  EXPECT_EQ(str(arange(6).view({2, 3}).to(kFloat)), " 0  1  2\n 3  4  5\n[ CPUFloatType{2,3} ]");
  EXPECT_EQ(str(arange(6).view({2, 3})), " 0  1  2\n 3  4  5\n[ CPULongType{2,3} ]");
  EXPECT_EQ(str(tensor(3.5)), "3.5\n[ CPUFloatType{} ]");
  EXPECT_EQ(str(tensor(3)), "3\n[ CPULongType{} ]");
  EXPECT_EQ(str(tensor(true)), "1\n[ CPUBoolType{} ]");
  EXPECT_EQ(str(empty({0})), "[ CPUFloatType{0} ]");
  EXPECT_EQ(str(empty({2, 0})), "[ CPUFloatType{2,0} ]");
  EXPECT_EQ(str(empty({0, 3}).to(kLong)), "[ CPULongType{0,3} ]");
  EXPECT_EQ(str(empty({2, 0, 3})), "[ CPUFloatType{2,0,3} ]");
  EXPECT_EQ(str(arange(5).to(kFloat)), " 0\n 1\n 2\n 3\n 4\n[ CPUFloatType{5} ]");
  EXPECT_EQ(str(arange(24).view({2, 3, 4})),
            "(1,.,.) = \n   0   1   2   3\n   4   5   6   7\n   8   9  10  11\n\n(2,.,.) = \n  12  "
            "13  14  15\n  16  17  18  19\n  20  21  22  23\n[ CPULongType{2,3,4} ]");
  EXPECT_EQ(str(arange(24).view({2, 3, 2, 2}).to(kDouble)),
            "(1,1,.,.) = \n  0  1\n  2  3\n\n(2,1,.,.) = \n  12  13\n  14  15\n\n(1,2,.,.) = \n  4 "
            " 5\n  6  7\n\n(2,2,.,.) = \n  16  17\n  18  19\n\n(1,3,.,.) = \n   8   9\n  10  "
            "11\n\n(2,3,.,.) = \n  20  21\n  22  23\n[ CPUDoubleType{2,3,2,2} ]");
  EXPECT_EQ(str(arange(60).view({2, 30})),
            "Columns 1 to 20  0   1   2   3   4   5   6   7   8   9  10  11  12  13  14  15  16  "
            "17  18  19\n 30  31  32  33  34  35  36  37  38  39  40  41  42  43  44  45  46  47  "
            "48  49\n\nColumns 21 to 30 20  21  22  23  24  25  26  27  28  29\n 50  51  52  53  "
            "54  55  56  57  58  59\n[ CPULongType{2,30} ]");
  EXPECT_EQ(
      str((arange(40).view({2, 20}).to(kDouble) + 0.5) * 1e-7),
      "Columns 1 to 101e-06 *\n 0.0500  0.1500  0.2500  0.3500  0.4500  0.5500  0.6500  0.7500  "
      "0.8500  0.9500\n  2.0500  2.1500  2.2500  2.3500  2.4500  2.5500  2.6500  2.7500  2.8500  "
      "2.9500\n\nColumns 11 to 201e-06 *\n 1.0500  1.1500  1.2500  1.3500  1.4500  1.5500  1.6500  "
      "1.7500  1.8500  1.9500\n  3.0500  3.1500  3.2500  3.3500  3.4500  3.5500  3.6500  3.7500  "
      "3.8500  3.9500\n[ CPUDoubleType{2,20} ]");
  EXPECT_EQ(str(tensor({1e-5, 1.0, 1000.0})),
            " 1.0000e-05\n 1.0000e+00\n 1.0000e+03\n[ CPUFloatType{3} ]");
  EXPECT_EQ(str(tensor({1e120, 1.0}, kDouble)), "1.0000e+120\n 1.0000e+00\n[ CPUDoubleType{2} ]");
  EXPECT_EQ(str(tensor({0.1, 0.25, 3.14159})), " 0.1000\n 0.2500\n 3.1416\n[ CPUFloatType{3} ]");
  EXPECT_EQ(str(tensor({1.5, -2.25}).to(kDouble)), " 1.5000\n-2.2500\n[ CPUDoubleType{2} ]");
  EXPECT_EQ(str(tensor({true, false, true})), " 1\n 0\n 1\n[ CPUBoolType{3} ]");
  EXPECT_EQ(str(tensor({complex<double>(1, 2), complex<double>(-3.5, 0.5)})),
            " 1.0000\n-3.5000\n[ CPUComplexDoubleType{2} ]");
  EXPECT_EQ(str(tensor({std::nan(""), double(INFINITY), -double(INFINITY), 1.0})),
            "nan\ninf\n-inf\n 1\n[ CPUFloatType{4} ]");
  EXPECT_EQ(str(tensor({std::nan(""), double(INFINITY)})), "nan\ninf\n[ CPUFloatType{2} ]");
  EXPECT_EQ(str(tensor({1.5, 2.0}).to(kHalf)), " 1.5000\n 2.0000\n[ CPUHalfType{2} ]");
  EXPECT_EQ(str(tensor({1.0, 2.0}).to(kBFloat16)), " 1\n 2\n[ CPUBFloat16Type{2} ]");
  EXPECT_EQ(str(tensor({1, 200}).to(kByte)), "   1\n 200\n[ CPUByteType{2} ]");
  EXPECT_EQ(str(tensor({1, -2}).to(kChar)), " 1\n-2\n[ CPUCharType{2} ]");
  EXPECT_EQ(str(tensor({1, -2}).to(kShort)), " 1\n-2\n[ CPUShortType{2} ]");
  EXPECT_EQ(str(tensor({1, -2}).to(kInt)), " 1\n-2\n[ CPUIntType{2} ]");
  EXPECT_EQ(str(Tensor()), "[ Tensor (undefined) ]");
  EXPECT_EQ(str(ones({1, 1, 1})), "(1,.,.) = \n  1\n[ CPUFloatType{1,1,1} ]");
  EXPECT_EQ(str(tensor({123456.0, 0.001})), " 1.2346e+05\n 1.0000e-03\n[ CPUFloatType{2} ]");
  EXPECT_EQ(str(tensor({-1e-8, 1e-8})), "1e-09 *\n-10.0000\n10.0000\n[ CPUFloatType{2} ]");
  EXPECT_EQ(str(tensor({0.0, 0.0})), " 0\n 0\n[ CPUFloatType{2} ]");
  EXPECT_EQ(str(tensor(1e20)), "1e+20\n[ CPUFloatType{} ]");
  EXPECT_EQ(str(tensor(-0.001)), "-0.001\n[ CPUFloatType{} ]");
  EXPECT_EQ(str(tensor({100000000, -5})), "     1e+08\n        -5\n[ CPULongType{2} ]");
  EXPECT_EQ(str(tensor({int64_t(12345678901), int64_t(-5)})),
            " 1.2346e+10\n-5.0000e+00\n[ CPULongType{2} ]");
  EXPECT_EQ(str(tensor({-1000.5, 2.5})), "-1000.5000\n    2.5000\n[ CPUFloatType{2} ]");
  EXPECT_EQ(str(tensor({1234567.5, 2345678.25})), "1e+06 *\n 1.2346\n 2.3457\n[ CPUFloatType{2} ]");
  EXPECT_EQ(str(tensor({{1e-8, 2e-8}, {3e-8, 4.5e-8}})),
            "1e-08 *\n 1.0000  2.0000\n  3.0000  4.5000\n[ CPUFloatType{2,2} ]");
  EXPECT_EQ(str(arange(6).view({2, 3}).t()), " 0  3\n 1  4\n 2  5\n[ CPULongType{3,2} ]");
  EXPECT_EQ(str((arange(8).view({2, 2, 2}).to(kDouble) + 0.25) *
                tensor({1e-6, 1.0}, kDouble).view({2, 1, 1})),
            "(1,.,.) = \n 1e-06 *\n  0.2500  1.2500\n   2.2500  3.2500\n\n(2,.,.) = \n  4.2500  "
            "5.2500\n  6.2500  7.2500\n[ CPUDoubleType{2,2,2} ]");
  EXPECT_EQ(str(arange(6).view({2, 3}).to(kFloat) / 4),
            " 0.0000  0.2500  0.5000\n 0.7500  1.0000  1.2500\n[ CPUFloatType{2,3} ]");
  EXPECT_EQ(str(tensor({-0.5, -1.25, 2.0})), "-0.5000\n-1.2500\n 2.0000\n[ CPUFloatType{3} ]");
  EXPECT_EQ(str(tensor(complex<double>(2.5, 1))), "2.5\n[ CPUComplexDoubleType{} ]");
  EXPECT_EQ(str(tensor({complex<float>(1.25f, 2)})), " 1.2500\n[ CPUComplexFloatType{1} ]");
  EXPECT_EQ(str(arange(12).view({1, 12}).to(kDouble) * 1000.5),
            "Columns 1 to 6     0.0000   1000.5000   2001.0000   3001.5000   4002.0000   "
            "5002.5000\n\nColumns 7 to 12  6003.0000   7003.5000   8004.0000   9004.5000  "
            "10005.0000  11005.5000\n[ CPUDoubleType{1,12} ]");
}

TEST(Print, NonContiguousAndStridedInputs) {
  // A strided slice prints like its contiguous copy.
  Tensor x = arange(12).view({3, 4}).slice(1, 0, std::nullopt, 2);
  EXPECT_EQ(str(x), str(x.contiguous()));
  EXPECT_EQ(str(x), "  0   2\n  4   6\n  8  10\n[ CPULongType{3,2} ]");
}

TEST(Print, RestoresStreamState) {
  // libtorch: `os << torch::arange(3) << 1.23456789` prints "... ]1.23457".
  std::ostringstream os;
  os << arange(3) << 1.23456789;
  EXPECT_EQ(os.str(), " 0\n 1\n 2\n[ CPULongType{3} ]1.23457");
  // A caller's precision is kept.
  std::ostringstream os2;
  os2 << std::setprecision(3) << tensor({0.5, 1.5}) << 3.14159;
  EXPECT_EQ(os2.str(), " 0.5000\n 1.5000\n[ CPUFloatType{2} ]3.14");
}

TEST(Print, ToStringAndPrint) {
  // libtorch: ones({2}).toString() == "CPUFloatType"; print() writes "[CPUFloatType [2]]" to
  // stderr; an undefined tensor is "UndefinedType" / "[UndefinedTensor]".
  EXPECT_EQ(ones({2}).toString(), "CPUFloatType");
  EXPECT_EQ(arange(2).toString(), "CPULongType");
  EXPECT_EQ(ones({1}, kComplexDouble).toString(), "CPUComplexDoubleType");
  EXPECT_EQ(Tensor().toString(), "UndefinedType");
  testing::internal::CaptureStderr();
  ones({2, 3}).print();
  Tensor().print();
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "[CPUFloatType [2, 3]]\n[UndefinedTensor]\n");
}
