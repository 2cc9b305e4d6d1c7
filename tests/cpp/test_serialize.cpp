// safetensors save/load: round trips of every dtype and layout, the exact bytes of the format
// (derived by hand from the spec), atomic writes, and malformed files rejected with ember::Error.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "ember/ember.h"
#include "ember/serialize.h"

using namespace ember;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() /
           ("ember_serialize_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

std::string read_bytes(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

void write_bytes(const std::string& p, const std::string& s) {
  std::ofstream f(p, std::ios::binary);
  f << s;
}

// A file with the given JSON header (padded) and data buffer, written without ember.
std::string st_file(std::string json, const std::string& data, bool pad = true) {
  if (pad)
    while (json.size() % 8) json += ' ';
  std::string out(8, '\0');
  uint64_t n = json.size();
  for (int i = 0; i < 8; ++i) out[size_t(i)] = char((n >> (8 * i)) & 0xFF);
  return out + json + data;
}

void expect_load_error(const std::string& path, const std::string& needle) {
  try {
    load_dict(path);
    FAIL() << "expected an error containing '" << needle << "'";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("[load] " + path), std::string::npos) << msg;
    EXPECT_NE(msg.find(needle), std::string::npos) << msg;
  }
}

}  // namespace

TEST(Serialize, RoundTripEveryDtype) {
  TempDir dir;
  OrderedDict<std::string, Tensor> d;
  for (ScalarType t : {kBool, kByte, kChar, kShort, kInt, kLong, kHalf, kBFloat16, kFloat, kDouble,
                       kComplexFloat, kComplexDouble}) {
    Tensor x = arange(12, kDouble).sub(Scalar(5)).view({3, 4}).to(t);
    d.insert(std::string("c_") + dtype_name(t), x);
    d.insert(std::string("s_") + dtype_name(t), x.t());              // strided
    d.insert(std::string("z_") + dtype_name(t), x.narrow(0, 0, 0));  // zero-size
    d.insert(std::string("o_") + dtype_name(t), x[1][2]);            // 0-dim
  }
  std::map<std::string, std::string> meta{{"format", "pt"}, {"note", "quote \" and \\ and \n"}};
  std::string p = dir.file("all.safetensors");
  save(d, p, meta);
  std::map<std::string, std::string> meta2;
  auto back = load_dict(p, &meta2);
  EXPECT_EQ(meta2, meta);
  EXPECT_EQ(safetensors_metadata(p), meta);
  ASSERT_EQ(back.size(), d.size());
  for (size_t i = 0; i < d.size(); ++i) {
    EXPECT_EQ(back[i].key(), d[i].key());
    const Tensor &a = d[i].value(), &b = back[i].value();
    EXPECT_EQ(b.dtype(), a.dtype()) << d[i].key();
    EXPECT_EQ(b.sizes().vec(), a.sizes().vec()) << d[i].key();
    EXPECT_TRUE(b.is_contiguous());
    EXPECT_TRUE(equal(a, b)) << d[i].key();
  }
}

TEST(Serialize, ExactBytesOfTheSpec) {
  TempDir dir;
  OrderedDict<std::string, Tensor> d;
  d.insert("w", tensor({1.0f, 2.0f}));
  d.insert("b", tensor({int16_t(-2)}, kShort).view({1, 1}));
  std::string p = dir.file("x.safetensors");
  save(d, p, {{"k", "v"}});
  std::string json =
      "{\"__metadata__\":{\"k\":\"v\"},\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":"
      "[0,8]},\"b\":{\"dtype\":\"I16\",\"shape\":[1,1],\"data_offsets\":[8,10]}}";
  std::string data("\x00\x00\x80\x3f\x00\x00\x00\x40\xfe\xff", 10);
  EXPECT_EQ(read_bytes(p), st_file(json, data));
  EXPECT_EQ(read_bytes(p).size() % 8, 10u % 8);  // header (with prefix) is a multiple of 8
}

TEST(Serialize, ReadsAReferenceWriterFile) {
  TempDir dir;
  // Keys out of offset order, a tensor of zero elements, escapes and non-ASCII in names.
  std::string json =
      "{\"b\\u00e9\\ud83d\\ude00\": {\"dtype\": \"I32\", \"shape\": [2], \"data_offsets\": [8, "
      "16]}, \"a\": {\"dtype\": \"F64\", \"shape\": [], \"data_offsets\": [0, 8]},"
      " \"e\": {\"dtype\": \"U8\", \"shape\": [0, 5], \"data_offsets\": [16, 16]}}";
  std::string data("\x00\x00\x00\x00\x00\x00\xf0\x3f\x07\x00\x00\x00\xff\xff\xff\xff", 16);
  std::string p = dir.file("ref.safetensors");
  write_bytes(p, st_file(json, data));
  auto d = load_dict(p);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[size_t(0)].key(), "b\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_TRUE(equal(d[size_t(0)].value(), tensor({7, -1}, kInt)));
  EXPECT_EQ(d["a"].dim(), 0);
  EXPECT_EQ(d["a"].item<double>(), 1.0);
  EXPECT_EQ(d["e"].sizes().vec(), (std::vector<int64_t>{0, 5}));
  EXPECT_EQ(d["e"].dtype(), kByte);
}

TEST(Serialize, SingleTensorAndList) {
  TempDir dir;
  Tensor x = randn({3, 2}).requires_grad_();
  save(x, dir.file("t"));
  Tensor y;
  load(y, dir.file("t"));
  EXPECT_TRUE(equal(x.detach(), y));
  EXPECT_FALSE(y.requires_grad());
  std::vector<Tensor> v{x.detach(), arange(3, kLong), ones({0})};
  save(v, dir.file("v"));
  std::vector<Tensor> w;
  load(w, dir.file("v"));
  ASSERT_EQ(w.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(equal(v[i], w[i]));
  EXPECT_THROW(load(y, dir.file("v")), Error);  // three tensors, not one
  OrderedDict<std::string, Tensor> d;
  d.insert("x", x);
  save(d, dir.file("d"));
  EXPECT_THROW(load(w, dir.file("d")), Error);  // no "0" key
}

TEST(Serialize, AtomicWrites) {
  TempDir dir;
  std::string p = dir.file("a.safetensors");
  save(tensor({1.0f}), p);
  std::string before = read_bytes(p);
  // A failing save (unsupported key) leaves the old file and no temporary behind.
  OrderedDict<std::string, Tensor> bad;
  bad.insert("__metadata__", tensor({1.0f}));
  EXPECT_THROW(save(bad, p), Error);
  OrderedDict<std::string, Tensor> undef;
  undef.insert("u", Tensor());
  EXPECT_THROW(save(undef, p), Error);
  EXPECT_EQ(read_bytes(p), before);
  EXPECT_THROW(save(tensor({1.0f}), dir.file("missing/dir/x")), Error);
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir.path)) {
    ++files;
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos);
  }
  EXPECT_EQ(files, 1u);
}

TEST(Serialize, MalformedFiles) {
  TempDir dir;
  std::string p = dir.file("bad");
  auto check = [&](const std::string& bytes, const std::string& needle) {
    write_bytes(p, bytes);
    expect_load_error(p, needle);
  };
  const std::string f32 = "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}";
  const std::string four(4, '\0');
  ASSERT_NO_THROW({
    write_bytes(p, st_file(f32, four));
    load_dict(p);
  });
  check("", "too short");
  check(std::string("\x05\0\0\0", 4), "too short");
  check(std::string("\xff\xff\xff\xff\xff\xff\xff\xff", 8), "too large");
  check(std::string("\x40\0\0\0\0\0\0\0{}", 10), "exceeds the file size");
  check(st_file("[]", ""), "start with '{'");
  check(st_file("{\"a\":", ""), "unexpected end");
  check(st_file("{\"a\":{}} x", ""), "after the top-level value");
  check(st_file("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},}", four),
        "expected a string key");
  check(st_file("{\"a\":{\"dtype\":\"Q8\",\"shape\":[1],\"data_offsets\":[0,4]}}", four),
        "unsupported dtype 'Q8'");
  check(st_file("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}", four),
        "need 8 bytes");
  check(st_file("{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", four),
        "non-negative integer");
  check(st_file("{\"a\":{\"dtype\":\"F32\",\"shape\":[1.0],\"data_offsets\":[0,4]}}", four),
        "non-negative integer");
  check(st_file("{\"a\":{\"dtype\":\"F32\",\"shape\":[99999999999999999999],\"data_offsets\":"
                "[0,4]}}",
                four),
        "too large");
  check(st_file("{\"a\":{\"dtype\":\"U8\",\"shape\":[4294967296,4294967296,4294967296],"
                "\"data_offsets\":[0,4]}}",
                four),
        "shape is too large");
  check(st_file("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", four),
        "exceed the data buffer");
  check(st_file("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
                std::string(8, '\0')),
        "gap");
  check(st_file("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[2,6]}}",
                std::string(6, '\0')),
        "overlaps");
  check(st_file(f32, std::string(5, '\0')), "tensors use 4");
  check(st_file("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
                std::string(8, '\0')),
        "duplicate tensor name 'a'");
  check(st_file("{\"__metadata__\":{\"k\":1}}", ""), "must be a string");
  check(st_file("{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}", ""), "duplicate metadata key");
  check(st_file("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"x\":1}}", four),
        "unexpected key 'x'");
  check(st_file("{\"a\":{\"dtype\":\"F32\",\"shape\":[1]}}", ""), "needs 'dtype'");
  check(st_file("{\"\xff\":{}}", ""), "invalid UTF-8");
  check(st_file("{\"\\ud800\":{}}", ""), "surrogate");
  check(st_file("{\"a\x01\":{}}", ""), "control character");
  check(st_file("{\"a\":" + std::string(100, '[') + std::string(100, ']') + "}", ""),
        "nested too deeply");
  // A file that ends before the header does.
  std::string full = st_file(f32, four);
  check(full.substr(0, 20), "exceeds the file size");
  EXPECT_THROW(load_dict(dir.file("does-not-exist")), Error);
  EXPECT_THROW(load_dict(dir.path.string()), Error);  // a directory
}
