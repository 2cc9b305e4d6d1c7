// ember::load_pt on checkpoints written by torch 1.13 (tests/data/pt, see its README): values
// derived by hand from the generator script, views and shared storages, the generic tree,
// flattening, and malformed or hostile files rejected with typed errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "ember/ember.h"
#include "ember/nn.h"
#include "ember/pt_format.h"
#include "serialize/pickle_reader.h"

using namespace ember;
namespace fs = std::filesystem;

namespace {

// tests/data/pt, found from this file's path (relative to the build directory when the
// compiler was given a relative path: try the working directory, then the executable's).
std::string fixture(const std::string& name) {
  fs::path rel = fs::path(__FILE__).parent_path().parent_path() / "data" / "pt" / name;
  if (rel.is_absolute() || fs::exists(rel)) return rel.string();
  std::error_code ec;
  fs::path exe = fs::canonical("/proc/self/exe", ec).parent_path();
  for (fs::path dir = exe; !dir.empty() && dir != dir.root_path(); dir = dir.parent_path())
    if (fs::exists(dir / rel)) return (dir / rel).string();
  return rel.string();
}

// A byte string from a literal, embedded NULs included.
template <size_t N>
std::string raw(const char (&s)[N]) {
  return std::string(s, N - 1);
}

std::string read_bytes(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

struct TempFile {
  std::string path;
  explicit TempFile(const std::string& bytes) {
    path = (fs::temp_directory_path() /
            ("ember_pt_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    std::ofstream(path, std::ios::binary) << bytes;
  }
  ~TempFile() { fs::remove(path); }
};

template <class Err, class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Err& e) {
    return e.what();
  }
  ADD_FAILURE() << "no exception of the expected type";
  return "";
}

const ScalarType kDtypes[] = {kHalf, kBFloat16, kComplexFloat, kComplexDouble, kBool,  kChar,
                              kByte, kShort,    kInt,          kLong,          kFloat, kDouble};
const char* kNames[] = {"float16", "bfloat16", "complex64", "complex128", "bool",    "int8",
                        "uint8",   "int16",    "int32",     "int64",      "float32", "float64"};

// make_fixtures.py: arange(6) (bool: arange(6) % 2) in each dtype, shape (2, 3).
Tensor expected_dtype_tensor(ScalarType t) {
  Tensor v = arange(6, TensorOptions().dtype(kLong));
  if (t == kBool) v = v.remainder(2);
  return v.to(t).reshape({2, 3});
}

void check_dtype_state_dict(const OrderedDict<std::string, Tensor>& sd) {
  ASSERT_EQ(sd.size(), 18u);
  for (size_t i = 0; i < 12; ++i) {
    SCOPED_TRACE(kNames[i]);
    const Tensor& t = sd[kNames[i]];
    EXPECT_EQ(t.dtype(), kDtypes[i]);
    EXPECT_EQ(t.sizes(), IntArrayRef({2, 3}));
    EXPECT_TRUE(equal(t, expected_dtype_tensor(kDtypes[i])));
    EXPECT_FALSE(t.requires_grad());
  }
  Tensor base = sd["shared.base"], tr = sd["shared.t"], row = sd["shared.row"],
         col = sd["shared.col"];
  EXPECT_TRUE(equal(base, arange(12, TensorOptions().dtype(kFloat)).reshape({4, 3})));
  EXPECT_EQ(tr.sizes(), IntArrayRef({3, 4}));
  EXPECT_EQ(tr.strides(), IntArrayRef({1, 3}));
  EXPECT_EQ(row.storage_offset(), 3);
  EXPECT_EQ(col.storage_offset(), 5);
  EXPECT_EQ(col.strides(), IntArrayRef({3}));
  EXPECT_TRUE(tr.is_alias_of(base) && row.is_alias_of(base) && col.is_alias_of(base));
  EXPECT_FALSE(base.is_alias_of(sd["float32"]));
  EXPECT_TRUE(equal(col, tensor(std::vector<float>{5, 8, 11})));
  base.add_(100);  // one storage: the views see the write
  EXPECT_TRUE(equal(col, tensor(std::vector<float>{105, 108, 111})));
  EXPECT_TRUE(equal(tr, base.t()));
  EXPECT_EQ(sd["scalar"].dim(), 0);
  EXPECT_EQ(sd["scalar"].item<double>(), 2.5);
  EXPECT_EQ(sd["empty"].sizes(), IntArrayRef({0, 3}));
}

}  // namespace

TEST(LoadPt, StateDictOfEveryDtypeWithViews) {
  check_dtype_state_dict(load_pt(fixture("state_dict.pt")));
}

TEST(LoadPt, DeflatedRecords) { check_dtype_state_dict(load_pt(fixture("deflate.pt"))); }

TEST(LoadPt, FromMemory) {
  std::string bytes = read_bytes(fixture("state_dict.pt"));
  check_dtype_state_dict(flatten_pt(load_pt_value(bytes.data(), bytes.size())));
}

TEST(LoadPt, NestedTreeAndFlatten) {
  PtValue v = load_pt_value(fixture("nested.pt"));
  ASSERT_TRUE(v.is_dict());
  EXPECT_FALSE(v.flag());  // a plain dict
  EXPECT_EQ(v.find("epoch")->to_int(), 3);
  EXPECT_EQ(v.find("lr")->to_double(), 0.125);
  EXPECT_EQ(v.find("name")->to_string(), "net");
  EXPECT_EQ(v.find("nothing"), nullptr);
  const PtValue& model = *v.find("model");
  EXPECT_TRUE(model.flag());  // an OrderedDict
  const PtValue& tup = *v.find("tuple");
  EXPECT_EQ(tup.kind(), PtValue::Kind::Tuple);
  EXPECT_TRUE(tup.items()[1].is_none());
  const PtValue& param = *v.find("param");
  EXPECT_TRUE(param.flag());
  EXPECT_TRUE(param.to_tensor().requires_grad());
  EXPECT_THROW(v.find("epoch")->to_tensor(), TypeError);

  auto flat = flatten_pt(v);
  std::vector<std::string> keys;
  for (const auto& it : flat) keys.push_back(it.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"model.weight", "model.bias", "list.0", "list.1",
                                            "tuple.0", "5", "param"}));
  EXPECT_TRUE(
      equal(flat["model.weight"], arange(6, TensorOptions().dtype(kFloat)).reshape({2, 3})));
  EXPECT_EQ(flat["list.1"].dtype(), kLong);
  EXPECT_TRUE(equal(flat["tuple.0"], full({2}, 7.0)));
  EXPECT_EQ(flat["5"].item<int64_t>(), 5);

  // A torch-trained state dict into an ember module.
  nn::Linear lin(3, 2);
  lin->load_state_dict(flatten_pt(model));
  Tensor y = lin->forward(ones({1, 3}));
  EXPECT_TRUE(allclose(y, tensor(std::vector<float>{-1 + 3, 1 + 12}).reshape({1, 2})));
}

TEST(LoadPt, HostileLegacyAndBrokenFiles) {
  std::string msg = error_of<Error>([] { load_pt(fixture("hostile.pt")); });
  EXPECT_NE(msg.find("refusing to load global 'posix.system'"), std::string::npos) << msg;
  msg = error_of<NotImplementedError>([] { load_pt(fixture("legacy.pt")); });
  EXPECT_NE(msg.find("legacy (pre-1.6)"), std::string::npos) << msg;
  msg = error_of<Error>([] { load_pt("/nonexistent/model.pt"); });
  EXPECT_NE(msg.find("cannot open"), std::string::npos) << msg;
  {
    TempFile junk("GIF89a junk");
    msg = error_of<Error>([&] { load_pt(junk.path); });
    EXPECT_NE(msg.find("expected a torch.save checkpoint"), std::string::npos) << msg;
  }
  // Every truncation of a valid file, and every one-byte corruption of a small one, either
  // loads or throws ember::Error.
  std::string good = read_bytes(fixture("nested.pt"));
  for (size_t n = 0; n < good.size(); n += 7)
    EXPECT_THROW(load_pt_value(good.data(), n), Error) << "truncated to " << n;
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] = char(bad[i] ^ 0x5a);
    try {
      load_pt_value(bad.data(), bad.size());
    } catch (const InternalError& e) {
      ADD_FAILURE() << "byte " << i << ": " << e.what();
    } catch (const Error&) {
    }
  }
}

TEST(LoadPt, UnpicklerRefusesAndBounds) {
  auto unpickle = [](const std::string& s) { return pickle::unpickle(s, "test"); };
  // A huge declared string length, a memo key never stored, an odd SETITEMS.
  EXPECT_THROW(unpickle(raw("\x80\x02\x8d\xff\xff\xff\xff\xff\xff\xff\x7f")), Error);
  EXPECT_THROW(unpickle(raw("\x80\x02h\x05.")), Error);
  EXPECT_THROW(unpickle(raw("\x80\x02}(K\x01u.")), Error);
  std::string msg = error_of<Error>([&] {
    unpickle(
        "\x80\x02"
        "cbuiltins\neval\n.");
  });
  EXPECT_NE(msg.find("refusing to load global 'builtins.eval'"), std::string::npos) << msg;
  // Big integers keep their bytes; small ones become int64.
  auto r = unpickle(raw("\x80\x02\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00\x01."));
  EXPECT_EQ(r.root.kind, pickle::Kind::BigInt);
  r = unpickle(raw("\x80\x02\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x80."));
  EXPECT_EQ(r.root.kind, pickle::Kind::Int);
  EXPECT_EQ(r.root.i, INT64_MIN);
  r = unpickle(raw("\x80\x02\x8a\x01\xff."));
  EXPECT_EQ(r.root.i, -1);
  // A list that contains itself parses (the arena owns it) but is no tree.
  std::string cyclic =
      raw("\x80\x02]q\x00h\x00"
          "a.");
  EXPECT_EQ(unpickle(cyclic).root.obj->items.size(), 1u);
}
