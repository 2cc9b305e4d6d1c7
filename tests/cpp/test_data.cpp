// ember::data: IDX files (hand-built bytes, plain and gzip), Fashion-MNIST when installed,
// datasets, samplers (hand-derived orders), the DataLoader (order, workers, errors) and the
// image transforms.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>

#include "ember/data.h"
#include "data_test_util.h"
#include "ember/ember.h"

using namespace ember;
using namespace ember::data;
namespace fs = std::filesystem;

namespace {

using ember::test::be32;
using ember::test::TempDir;
using ember::test::write_bytes;

std::string idx_header(uint8_t type, std::vector<uint32_t> dims) {
  std::string s{char(0), char(0), char(type), char(dims.size())};
  for (uint32_t d : dims) s += be32(d);
  return s;
}

bool gzip_file(const std::string& in, const std::string& out) {
  return std::system(("gzip -n -c '" + in + "' > '" + out + "'").c_str()) == 0;
}

std::vector<int64_t> flat(const Tensor& t) {
  Tensor c = t.to(kLong).contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

void expect_error_naming(const std::function<void()>& f, const std::string& path,
                         const std::string& needle) {
  try {
    f();
    FAIL() << "expected an error containing '" << needle << "'";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find(needle), std::string::npos) << msg;
  }
}

const char* kFashion = "/usr/share/datasets/fashion-mnist";

}  // namespace

TEST(DataIdx, EveryTypeBigEndian) {
  TempDir dir;
  struct Case {
    uint8_t type;
    ScalarType dtype;
    std::string payload;
    std::vector<double> values;
  };
  std::vector<Case> cases = {
      {0x08, kByte, std::string("\x01\xff", 2), {1, 255}},
      {0x09, kChar, std::string("\x01\xff", 2), {1, -1}},
      {0x0B, kShort, std::string("\x01\x02\xff\xfe", 4), {258, -2}},
      {0x0C, kInt, std::string("\x00\x01\x00\x00\xff\xff\xff\xff", 8), {65536, -1}},
      {0x0D, kFloat, std::string("\x3f\x80\x00\x00\xc0\x00\x00\x00", 8), {1.0, -2.0}},
      {0x0E, kDouble, std::string("\x3f\xf0\0\0\0\0\0\0\x40\x08\0\0\0\0\0\0", 16), {1.0, 3.0}},
  };
  for (const Case& c : cases) {
    std::string p = dir.file("t" + std::to_string(c.type));
    write_bytes(p, idx_header(c.type, {1, 2}) + c.payload);
    Tensor t = read_idx(p);
    EXPECT_EQ(t.dtype(), c.dtype);
    EXPECT_EQ(t.sizes().vec(), (std::vector<int64_t>{1, 2}));
    EXPECT_TRUE(equal(t.to(kDouble).view({2}), tensor(c.values, kDouble))) << int(c.type);
    ASSERT_TRUE(gzip_file(p, p + ".gz"));
    EXPECT_TRUE(equal(read_idx(p + ".gz"), t));
  }
  // Zero-size dims are fine.
  write_bytes(dir.file("empty"), idx_header(0x08, {0, 28, 28}));
  EXPECT_EQ(read_idx(dir.file("empty")).sizes().vec(), (std::vector<int64_t>{0, 28, 28}));
}

TEST(DataIdx, MalformedFiles) {
  TempDir dir;
  std::string p = dir.file("bad");
  auto check = [&](const std::string& bytes, const std::string& needle) {
    write_bytes(p, bytes);
    expect_error_naming([&] { read_idx(p); }, p, needle);
  };
  check("", "too short");
  check(std::string("\x01\x00\x08\x01", 4) + be32(1) + "x", "bad magic");
  check(idx_header(0x07, {1}) + "x", "unknown IDX element type");
  check(std::string("\0\0\x08\0", 4), "dimensions");
  check(std::string("\0\0\x08\x02", 4) + be32(1), "too short");
  check(idx_header(0x08, {2, 3}) + "abcde", "need 6 bytes");
  check(idx_header(0x08, {2, 3}) + "abcdefg", "need 6 bytes");
  check(idx_header(0x0E, {0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF}), "overflow");
  // gzip: truncated, corrupt, trailing garbage.
  write_bytes(dir.file("ok"), idx_header(0x08, {4, 100}) + std::string(400, 'x'));
  ASSERT_TRUE(gzip_file(dir.file("ok"), dir.file("ok.gz")));
  std::ifstream f(dir.file("ok.gz"), std::ios::binary);
  std::string gz((std::istreambuf_iterator<char>(f)), {});
  check(gz.substr(0, gz.size() - 6), "truncated gzip");
  std::string corrupt = gz;
  corrupt[12] = char(corrupt[12] ^ 0x55);
  corrupt[13] = char(corrupt[13] ^ 0x55);
  check(corrupt, "gzip");
  check(gz + "junk", "after the gzip stream");
  check(gz + gz, "need 400 bytes");  // two members inflate to one doubled stream
  EXPECT_THROW(read_idx(dir.file("missing")), Error);
}

TEST(DataMnist, LayoutAndErrors) {
  TempDir dir;
  std::string img = idx_header(0x08, {2, 2, 3});
  for (int i = 0; i < 12; ++i) img += char(i * 20);
  write_bytes(dir.file("train-images-idx3-ubyte"), img);
  write_bytes(dir.file("train-labels-idx1-ubyte"), idx_header(0x08, {2}) + "\x07\x03");
  MNIST ds(dir.path.string(), MNIST::Mode::kTrain);
  ASSERT_EQ(ds.size(), 2u);
  EXPECT_EQ(ds.images().sizes().vec(), (std::vector<int64_t>{2, 1, 2, 3}));
  EXPECT_EQ(ds.images().dtype(), kFloat);
  EXPECT_EQ(ds.targets().dtype(), kLong);
  EXPECT_FLOAT_EQ(ds.get(1).data[0][1][2].item<float>(), 220.0f / 255.0f);
  EXPECT_EQ(ds.get(1).target.item<int64_t>(), 3);
  EXPECT_EQ(flat(ds.get_batch({1, 0, 1}).target), (std::vector<int64_t>{3, 7, 3}));
  EXPECT_THROW(ds.get(2), IndexError);
  // Test split missing; then a count mismatch; then labels of the wrong rank.
  expect_error_naming([&] { MNIST(dir.path.string(), MNIST::Mode::kTest); }, "t10k-images",
                      "cannot find");
  write_bytes(dir.file("train-labels-idx1-ubyte"), idx_header(0x08, {3}) + "\x07\x03\x01");
  expect_error_naming([&] { MNIST(dir.path.string()); }, "train-labels", "3 labels");
  write_bytes(dir.file("train-labels-idx1-ubyte"), idx_header(0x08, {1, 2}) + "\x07\x03");
  expect_error_naming([&] { MNIST(dir.path.string()); }, "train-labels", "1-D uint8 labels");
}

TEST(DataMnist, FashionMnistFromDebian) {
  // scripts/install-deps (the test group) installs Debian's dataset-fashion-mnist.
  ASSERT_TRUE(fs::exists(std::string(kFashion) + "/train-images-idx3-ubyte.gz"))
      << "Fashion-MNIST is not installed: run scripts/install-deps test";
  FashionMNIST train(kFashion, MNIST::Mode::kTrain), test(kFashion, MNIST::Mode::kTest);
  EXPECT_EQ(train.images().sizes().vec(), (std::vector<int64_t>{60000, 1, 28, 28}));
  EXPECT_EQ(test.images().sizes().vec(), (std::vector<int64_t>{10000, 1, 28, 28}));
  // Known values (from the raw files): first labels, class balance, pixel sums.
  EXPECT_EQ(flat(train.targets().narrow(0, 0, 5)), (std::vector<int64_t>{9, 0, 0, 3, 0}));
  EXPECT_EQ(flat(test.targets().narrow(0, 0, 5)), (std::vector<int64_t>{9, 2, 1, 1, 6}));
  EXPECT_EQ(flat(bincount(train.targets())), std::vector<int64_t>(10, 6000));
  auto pixel_sum = [](const Tensor& t) {
    return t.to(kDouble).mul(Scalar(255)).round().sum().item<double>();
  };
  EXPECT_EQ(pixel_sum(train.images()[0]), 76247.0);
  EXPECT_EQ(pixel_sum(test.images()), 573469082.0);
  EXPECT_GE(train.images().min().item<float>(), 0.0f);
  EXPECT_LE(train.images().max().item<float>(), 1.0f);
  Tensor raw = read_idx(std::string(kFashion) + "/t10k-labels-idx1-ubyte.gz");
  EXPECT_TRUE(equal(raw.to(kLong), test.targets()));
}

TEST(DataDataset, TensorSubsetConcatSplit) {
  Tensor x = arange(20, kFloat).view({10, 2}), y = arange(10, kLong);
  auto ds = std::make_shared<TensorDataset>(x, y);
  EXPECT_EQ(ds->size(), 10u);
  Example e = ds->get(3);
  EXPECT_TRUE(equal(e.data, tensor({6.0f, 7.0f})));
  EXPECT_EQ(e.target.item<int64_t>(), 3);
  Example b = ds->get_batch({4, 1});
  EXPECT_TRUE(equal(b.target, tensor({4, 1}, kLong)));
  EXPECT_TRUE(equal(b.data, x.index_select(0, tensor({4, 1}, kLong))));
  // The default get_batch (stacking get) agrees with the gather.
  EXPECT_TRUE(equal(ds->Dataset::get_batch({4, 1}).data, b.data));
  EXPECT_THROW(ds->get(10), IndexError);
  EXPECT_THROW(ds->get_batch({0, 10}), IndexError);
  EXPECT_THROW(TensorDataset(x, arange(9)), ValueError);
  TensorDataset unlabelled(x);
  EXPECT_FALSE(unlabelled.get(0).target.defined());

  auto sub = std::make_shared<Subset>(ds, std::vector<size_t>{9, 0, 5});
  EXPECT_EQ(flat(sub->get_batch({2, 0}).target), (std::vector<int64_t>{5, 9}));
  EXPECT_THROW(Subset(ds, {10}), IndexError);
  ConcatDataset cat({ds, sub});
  EXPECT_EQ(cat.size(), 13u);
  EXPECT_EQ(cat.get(10).target.item<int64_t>(), 9);
  EXPECT_EQ(cat.get(9).target.item<int64_t>(), 9);
  EXPECT_EQ(cat.get(12).target.item<int64_t>(), 5);
  EXPECT_THROW(cat.get(13), IndexError);

  Generator g;
  g.manual_seed(42);
  auto parts = random_split(ds, {3, 7}, g);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0]->size(), 3u);
  std::set<size_t> all;
  for (auto& p : parts) all.insert(p->indices().begin(), p->indices().end());
  EXPECT_EQ(all.size(), 10u);
  g.manual_seed(42);
  Tensor perm = randperm(10, g);
  EXPECT_EQ(parts[0]->indices()[0], size_t(perm[0].item<int64_t>()));
  EXPECT_THROW(random_split(ds, {3, 3}), ValueError);
}

TEST(DataSampler, OrdersAndErrors) {
  EXPECT_EQ(SequentialSampler(4).indices(), (std::vector<size_t>{0, 1, 2, 3}));
  Generator g1, g2;
  g1.manual_seed(7);
  g2.manual_seed(7);
  RandomSampler r1(50, false, std::nullopt, g1), r2(50, false, std::nullopt, g2);
  auto a = r1.indices();
  EXPECT_EQ(a, r2.indices());
  EXPECT_NE(a, r1.indices());  // the next epoch differs
  EXPECT_EQ(std::set<size_t>(a.begin(), a.end()).size(), 50u);
  // num_samples beyond n: whole permutations then a cut one.
  RandomSampler r3(5, false, 12, g1);
  auto c = r3.indices();
  ASSERT_EQ(c.size(), 12u);
  EXPECT_EQ(std::set<size_t>(c.begin(), c.begin() + 5).size(), 5u);
  EXPECT_EQ(std::set<size_t>(c.begin() + 5, c.begin() + 10).size(), 5u);
  RandomSampler r4(3, true, 70, g1);
  auto d = r4.indices();
  EXPECT_EQ(d.size(), 70u);
  for (size_t i : d) EXPECT_LT(i, 3u);
  EXPECT_THROW(RandomSampler(3, false, 0), ValueError);

  SubsetRandomSampler s({10, 20, 30}, g1);
  auto si = s.indices();
  EXPECT_EQ(std::set<size_t>(si.begin(), si.end()), (std::set<size_t>{10, 20, 30}));

  WeightedRandomSampler w({0.0, 1.0, 0.0, 3.0}, 100, true, g1);
  for (size_t i : w.indices()) EXPECT_TRUE(i == 1 || i == 3);
  WeightedRandomSampler w2({1.0, 1.0, 1.0}, 3, false, g1);
  auto wi = w2.indices();
  EXPECT_EQ(std::set<size_t>(wi.begin(), wi.end()).size(), 3u);
  EXPECT_THROW(WeightedRandomSampler({1.0}, 2, false, g1).indices(), Error);

  // torch.utils.data.DistributedSampler(range(10), 3, r, shuffle=False) by hand.
  EXPECT_EQ(DistributedSampler(10, 3, 0, false).indices(), (std::vector<size_t>{0, 3, 6, 9}));
  EXPECT_EQ(DistributedSampler(10, 3, 1, false).indices(), (std::vector<size_t>{1, 4, 7, 0}));
  EXPECT_EQ(DistributedSampler(10, 3, 2, false).indices(), (std::vector<size_t>{2, 5, 8, 1}));
  EXPECT_EQ(DistributedSampler(10, 3, 2, false, 0, true).indices(), (std::vector<size_t>{2, 5, 8}));
  EXPECT_EQ(DistributedSampler(2, 5, 4, false).indices(), (std::vector<size_t>{0}));
  std::set<size_t> seen;
  for (size_t r = 0; r < 3; ++r) {
    DistributedSampler ds(9, 3, r, true, 5);
    ds.set_epoch(2);
    auto v = ds.indices();
    EXPECT_EQ(v.size(), 3u);
    seen.insert(v.begin(), v.end());
  }
  EXPECT_EQ(seen.size(), 9u);
  DistributedSampler e0(20, 1, 0, true, 1), e1(20, 1, 0, true, 1);
  e1.set_epoch(1);
  EXPECT_NE(e0.indices(), e1.indices());
  EXPECT_THROW(DistributedSampler(10, 3, 3), ValueError);

  BatchSampler bs(std::make_shared<SequentialSampler>(5), 2, false);
  EXPECT_EQ(bs.batches(), (std::vector<std::vector<size_t>>{{0, 1}, {2, 3}, {4}}));
  EXPECT_EQ(bs.size(), 3u);
  BatchSampler bd(std::make_shared<SequentialSampler>(5), 2, true);
  EXPECT_EQ(bd.batches().size(), 2u);
  EXPECT_EQ(bd.size(), 2u);
  EXPECT_THROW(BatchSampler(std::make_shared<SequentialSampler>(5), 0, true), ValueError);
}

namespace {

// Records how many threads call get() at once and can fail or stall on chosen indices.
class ProbeDataset : public Dataset {
 public:
  explicit ProbeDataset(size_t n) : n_(n) {}
  Example<> get(size_t i) override {
    if (i == fail_at) EMBER_THROW(ValueError, "[ProbeDataset] bad sample ", i);
    if (i == slow_at) std::this_thread::sleep_for(std::chrono::milliseconds(300));
    return {full({2}, Scalar(double(i)), kFloat), scalar_tensor(int64_t(i), kLong)};
  }
  size_t size() const override { return n_; }
  size_t fail_at = size_t(-1), slow_at = size_t(-1);

 private:
  size_t n_;
};

std::vector<int64_t> epoch_targets(DataLoader& loader, size_t* batches = nullptr) {
  std::vector<int64_t> out;
  size_t nb = 0;
  for (Example<>& b : loader) {
    auto v = flat(b.target);
    out.insert(out.end(), v.begin(), v.end());
    ++nb;
  }
  if (batches) *batches = nb;
  return out;
}

}  // namespace

TEST(DataLoaderTest, OrderBatchesAndWorkers) {
  Tensor x = arange(100, kFloat).view({50, 2}), y = arange(50, kLong);
  auto seq = make_data_loader(TensorDataset(x, y), DataLoaderOptions(8));
  size_t nb = 0;
  auto t = epoch_targets(*seq, &nb);
  EXPECT_EQ(nb, 7u);
  EXPECT_EQ(seq->size(), 7u);
  EXPECT_EQ(t, flat(y));
  for (Example<>& b : *seq) {
    EXPECT_EQ(b.data.size(1), 2);
    EXPECT_TRUE(equal(b.data.select(1, 0), b.target.to(kFloat).mul(Scalar(2))));
  }
  auto dl = make_data_loader(TensorDataset(x, y), DataLoaderOptions(8).drop_last(true));
  EXPECT_EQ(epoch_targets(*dl, &nb).size(), 48u);
  EXPECT_EQ(nb, 6u);

  // Shuffle: a permutation per epoch, the same sequence for the same seed, with any workers.
  auto opts = DataLoaderOptions(7).shuffle(true).seed(123);
  auto s0 = make_data_loader(TensorDataset(x, y), opts);
  auto s3 = make_data_loader(TensorDataset(x, y), DataLoaderOptions(opts).workers(3));
  auto s2p = make_data_loader(
      TensorDataset(x, y),
      DataLoaderOptions(opts).workers(2).persistent_workers(true).prefetch_factor(1));
  std::vector<int64_t> first;
  for (int epoch = 0; epoch < 3; ++epoch) {
    auto a = epoch_targets(*s0), b = epoch_targets(*s3), c = epoch_targets(*s2p);
    EXPECT_EQ(a, b);
    EXPECT_EQ(a, c);
    EXPECT_EQ(std::set<int64_t>(a.begin(), a.end()).size(), 50u);
    EXPECT_NE(a, flat(y));
    if (epoch == 0)
      first = a;
    else
      EXPECT_NE(a, first);
  }
  EXPECT_THROW(DataLoader(std::make_shared<TensorDataset>(x, y), DataLoaderOptions(0)), ValueError);
}

TEST(DataLoaderTest, CollateErrorsTimeoutAndRestart) {
  auto ds = std::make_shared<ProbeDataset>(20);
  // A custom collate sees the samples of each batch.
  std::atomic<int> calls{0};
  auto opts = DataLoaderOptions(6).collate([&](std::vector<Example<>> s) {
    ++calls;
    return stack_examples(s);
  });
  auto loader = make_data_loader(ds, opts);
  EXPECT_EQ(epoch_targets(*loader).size(), 20u);
  EXPECT_EQ(calls.load(), 4);

  // Errors surface on the consumer, at the failing batch, with and without workers.
  ds->fail_at = 13;
  for (size_t workers : {0, 2}) {
    auto l = make_data_loader(ds, DataLoaderOptions(5).workers(workers));
    size_t seen = 0;
    try {
      for (Example<>& b : *l) {
        (void)b;
        ++seen;
      }
      FAIL() << "expected the dataset error";
    } catch (const ValueError& e) {
      EXPECT_NE(std::string(e.what()).find("bad sample 13"), std::string::npos);
    }
    EXPECT_EQ(seen, 2u);
  }
  ds->fail_at = size_t(-1);

  // Timeout: batch 0 takes 300 ms, the limit is 50 ms.
  ds->slow_at = 0;
  auto slow =
      make_data_loader(ds, DataLoaderOptions(4).workers(1).timeout(std::chrono::milliseconds(50)));
  EXPECT_THROW(slow->begin(), Error);
  ds->slow_at = size_t(-1);

  // Breaking out of an epoch and starting another gives a full, ordered epoch.
  auto l2 = make_data_loader(ds, DataLoaderOptions(3).workers(2));
  for (Example<>& b : *l2) {
    (void)b;
    break;
  }
  std::vector<int64_t> expect(20);
  for (int i = 0; i < 20; ++i) expect[size_t(i)] = i;
  EXPECT_EQ(epoch_targets(*l2), expect);

  // An explicit sampler.
  auto l3 = make_data_loader(ds, std::make_shared<DistributedSampler>(20, 4, 1, false),
                             DataLoaderOptions(2));
  EXPECT_EQ(epoch_targets(*l3), (std::vector<int64_t>{1, 5, 9, 13, 17}));
  EXPECT_THROW(
      DataLoader(ds, std::make_shared<SequentialSampler>(20), DataLoaderOptions(2).shuffle(true)),
      ValueError);
}

TEST(DataTransforms, NormalizeCropFlipRotateConvert) {
  namespace T = ember::data::transforms;
  Tensor img = arange(2 * 3 * 4, kFloat).view({2, 3, 4});
  Tensor n = T::Normalize({1.0, 2.0}, {2.0, 4.0})(img);
  EXPECT_FLOAT_EQ(n[0][0][0].item<float>(), -0.5f);
  EXPECT_FLOAT_EQ(n[1][2][3].item<float>(), (23.0f - 2.0f) / 4.0f);
  Tensor batch = img.unsqueeze(0).expand({3, 2, 3, 4});
  EXPECT_TRUE(allclose(T::Normalize({1.0}, {2.0})(batch), batch.sub(Scalar(1)).div(Scalar(2))));
  EXPECT_THROW(T::Normalize({1.0, 2.0, 3.0}, {1.0})(img), Error);
  EXPECT_THROW(T::Normalize({1.0}, {0.0}), ValueError);
  EXPECT_THROW(T::Normalize({1.0}, {1.0})(arange(24, kLong).view({2, 3, 4})), TypeError);

  Generator g;
  g.manual_seed(3);
  // Crop to the full size without padding: identity.
  EXPECT_TRUE(equal(T::RandomCrop({3, 4}, 0, g)(img), img));
  // With padding, every crop is a window of the zero-padded image.
  Tensor padded = constant_pad_nd(batch, {2, 2, 2, 2});
  Tensor crops = T::RandomCrop({3, 4}, 2, g)(batch.contiguous());
  ASSERT_EQ(crops.sizes().vec(), (std::vector<int64_t>{3, 2, 3, 4}));
  for (int64_t i = 0; i < 3; ++i) {
    bool found = false;
    for (int64_t r = 0; r <= 4 && !found; ++r)
      for (int64_t c = 0; c <= 4 && !found; ++c)
        found = equal(crops[i], padded[i].narrow(1, r, 3).narrow(2, c, 4));
    EXPECT_TRUE(found) << i;
  }
  EXPECT_THROW(T::RandomCrop({5, 5}, 0)(img), Error);

  EXPECT_TRUE(equal(T::RandomHorizontalFlip(1.0, g)(img), flip(img, {2})));
  EXPECT_TRUE(equal(T::RandomHorizontalFlip(0.0, g)(batch), batch));
  Tensor many = arange(64 * 4, kFloat).view({64, 1, 1, 4});
  Tensor f = T::RandomHorizontalFlip(0.5, g)(many);
  int flipped = 0;
  for (int64_t i = 0; i < 64; ++i) {
    bool same = equal(f[i], many[i]), mirrored = equal(f[i], flip(many[i], {2}));
    EXPECT_TRUE(same || mirrored);
    flipped += mirrored;
  }
  EXPECT_GT(flipped, 10);
  EXPECT_LT(flipped, 54);

  EXPECT_TRUE(equal(T::RandomRotation(0.0, g)(img), img));
  Tensor sq = arange(25, kFloat).add(Scalar(1)).view({1, 5, 5});
  Tensor rot = T::RandomRotation(180.0, g)(sq.unsqueeze(0).expand({8, 1, 5, 5}).contiguous());
  for (int64_t i = 0; i < 8; ++i) EXPECT_EQ(rot[i][0][2][2].item<float>(), 13.0f);  // the centre
  EXPECT_THROW(T::RandomRotation(-1.0), ValueError);

  Tensor u8 = tensor({0, 51, 255}, kByte).view({1, 1, 3});
  Tensor fl = T::ConvertImageDtype(kFloat)(u8);
  EXPECT_TRUE(allclose(fl, tensor({0.0f, 0.2f, 1.0f}).view({1, 1, 3})));
  EXPECT_TRUE(
      equal(T::ConvertImageDtype(kByte)(tensor({0.0f, 0.5f, 1.0f})), tensor({0, 127, 255}, kByte)));
  EXPECT_TRUE(equal(T::ConvertImageDtype(kShort)(tensor({0, 1, 255}, kByte)),
                    tensor({0, 128, 32640}, kShort)));
  EXPECT_TRUE(equal(T::ConvertImageDtype(kByte)(tensor({0, 128, 32767}, kShort)),
                    tensor({0, 1, 255}, kByte)));
  EXPECT_THROW(T::ConvertImageDtype(kLong)(tensor({1.0f})), Error);

  auto pipeline = T::Compose({T::ConvertImageDtype(kFloat), T::Normalize({0.5}, {0.5})});
  EXPECT_TRUE(allclose(pipeline(u8), tensor({-1.0f, -0.6f, 1.0f}).view({1, 1, 3})));
}
