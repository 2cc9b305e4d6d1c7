// ember::data in libtorch's shape: Example<>, the CRTP datasets and .map(), datasets::MNIST on
// hand-built IDX files and on Debian's Fashion-MNIST (values from NumPy on the raw files), the
// transforms, the samplers (orders printed by libtorch 1.13 for the same calls) and the
// StatelessDataLoader / StatefulDataLoader with and without workers.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <type_traits>

#include "ember/data.h"
#include "data_test_util.h"
#include "ember/ember.h"

using namespace ember;
namespace fs = std::filesystem;
namespace D = ember::data;
namespace T = ember::data::transforms;
namespace S = ember::data::samplers;

namespace {

using ember::test::be32;
using ember::test::TempDir;
using ember::test::write_bytes;

// An IDX file of uint8 with the given dims and bytes (MNIST's magic: 0x0803 / 0x0801).
std::string idx_u8(std::vector<uint32_t> dims, const std::string& payload) {
  std::string s{char(0), char(0), char(0x08), char(dims.size())};
  for (uint32_t d : dims) s += be32(d);
  return s + payload;
}

// Three 2×3 images with pixel k of image i = 10 * i + k, labels 4, 0, 9.
void write_tiny_mnist(const std::string& dir, const std::string& prefix) {
  std::string px;
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 6; ++k) px += char(10 * i + k);
  write_bytes(dir + "/" + prefix + "-images-idx3-ubyte", idx_u8({3, 2, 3}, px));
  write_bytes(dir + "/" + prefix + "-labels-idx1-ubyte",
              idx_u8({3}, std::string("\x04\x00\x09", 3)));
}

std::vector<int64_t> flat(const Tensor& t) {
  Tensor c = t.to(kLong).contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

const char* kFashion = "/usr/share/datasets/fashion-mnist";

// A CRTP dataset: example i is {[i, -i] float, i int64}; counts get() calls.
struct Range : D::datasets::Dataset<Range> {
  explicit Range(size_t n) : n(n) {}
  D::Example<> get(size_t i) override {
    if (i == fail_at) EMBER_THROW(ValueError, "[Range] bad example ", i);
    ++*calls;
    return {tensor({float(i), -float(i)}), scalar_tensor(int64_t(i), kLong)};
  }
  std::optional<size_t> size() const override { return n; }
  size_t n;
  size_t fail_at = size_t(-1);
  std::shared_ptr<std::atomic<int>> calls = std::make_shared<std::atomic<int>>(0);
};

// Targets of every batch of an epoch, concatenated, and the batch sizes.
template <typename Loader>
std::vector<int64_t> epoch_targets(Loader& loader, std::vector<int64_t>* sizes = nullptr) {
  std::vector<int64_t> out;
  for (auto& batch : loader) {
    auto v = flat(batch.target);
    out.insert(out.end(), v.begin(), v.end());
    if (sizes) sizes->push_back(batch.data.size(0));
  }
  return out;
}

std::vector<int64_t> iota(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = i;
  return v;
}

using Idx = std::vector<std::vector<size_t>>;
template <typename Sampler>
Idx drain(Sampler& s, size_t batch_size) {
  Idx out;
  while (auto b = s.next(batch_size)) out.push_back(*b);
  return out;
}

}  // namespace

TEST(DataLibtorchExample, Shapes) {
  D::Example<> e;
  EXPECT_FALSE(e.data.defined());
  D::Example<> f(ones({2}), zeros({}, kLong));
  EXPECT_EQ(f.data.numel(), 2);
  static_assert(std::is_same_v<D::Example<>::DataType, Tensor>);
  static_assert(std::is_same_v<D::TensorExample, D::Example<Tensor, D::example::NoTarget>>);
  D::TensorExample u = arange(3);  // implicit, and converts back to the tensor
  Tensor& back = u;
  EXPECT_TRUE(equal(back, arange(3)));
  D::Example<std::string, int> custom{"a", 1};
  EXPECT_EQ(custom.target, 1);
}

TEST(DataLibtorchMnist, SyntheticIdxPlainAndGzip) {
  TempDir dir;
  write_tiny_mnist(dir.path.string(), "train");
  D::datasets::MNIST ds(dir.path.string(), D::datasets::MNIST::Mode::kTrain);
  std::optional<size_t> n = ds.size();
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(*n, 3u);
  EXPECT_TRUE(ds.is_train());
  EXPECT_EQ(ds.images().sizes().vec(), (std::vector<int64_t>{3, 1, 2, 3}));
  EXPECT_EQ(ds.targets().dtype(), kLong);
  D::Example<> e = ds.get(2);
  EXPECT_EQ(e.data.sizes().vec(), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(e.data.dtype(), kFloat);
  EXPECT_EQ(e.target.dim(), 0);
  EXPECT_EQ(e.target.dtype(), kLong);
  EXPECT_EQ(e.target.item<int64_t>(), 9);
  // Pixel (1, 2) of image 2 is byte 25: 25 / 255 in float32.
  EXPECT_EQ(e.data[0][1][2].item<float>(), 25.0f / 255.0f);
  EXPECT_EQ(ds.get(0).target.item<int64_t>(), 4);
  EXPECT_THROW(ds.get(3), IndexError);
  // The default get_batch is the vector of get()s.
  auto batch = ds.get_batch({2, 0});
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_EQ(batch[1].target.item<int64_t>(), 4);
  // The test split is missing; then gzip-compressed files with libtorch's plain names absent.
  EXPECT_THROW(D::datasets::MNIST(dir.path.string(), D::datasets::MNIST::Mode::kTest), Error);
  for (const char* f : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte"}) {
    std::string p = dir.file(f);
    ASSERT_EQ(std::system(("gzip -n '" + p + "'").c_str()), 0);
  }
  D::datasets::MNIST gz(dir.path.string());
  EXPECT_TRUE(equal(gz.images(), ds.images()));
  EXPECT_TRUE(equal(gz.targets(), ds.targets()));
  write_tiny_mnist(dir.path.string(), "t10k");
  D::datasets::MNIST test(dir.path.string(), D::datasets::MNIST::Mode::kTest);
  EXPECT_FALSE(test.is_train());
  EXPECT_EQ(*test.size(), 3u);
}

TEST(DataLibtorchMnist, PixelsAreBytesOver255) {
  // libtorch and torchvision divide by 255; a multiply by 1/255 differs in the last bit for
  // 126 of the 256 byte values.
  TempDir dir;
  std::string px;
  for (int k = 0; k < 256; ++k) px += char(k);
  write_bytes(dir.file("train-images-idx3-ubyte"), idx_u8({4, 8, 8}, px));
  write_bytes(dir.file("train-labels-idx1-ubyte"), idx_u8({4}, std::string("\x01\x02\x03\x04", 4)));
  D::datasets::MNIST ds(dir.path.string());
  Tensor flat_images = ds.images().reshape({-1}).contiguous();
  const float* p = flat_images.data_ptr<float>();
  int mismatches = 0;
  for (int k = 0; k < 256; ++k) mismatches += p[k] != float(k) / 255.0f;
  EXPECT_EQ(mismatches, 0);
}

TEST(DataLibtorchMnist, FashionMnistFromDebian) {
  ASSERT_TRUE(fs::exists(std::string(kFashion) + "/train-images-idx3-ubyte.gz"))
      << "Fashion-MNIST is not installed: run scripts/install-deps test";
  D::datasets::MNIST train(kFashion), test(kFashion, D::datasets::MNIST::Mode::kTest);
  EXPECT_EQ(train.size().value(), 60000u);
  EXPECT_EQ(test.size().value(), 10000u);
  // Values from NumPy on the raw files.
  EXPECT_EQ(train.get(7).target.item<int64_t>(), 2);
  EXPECT_EQ(train.get(7).data[0][14][14].item<float>(), 229.0f / 255.0f);
  EXPECT_EQ(test.get(3).target.item<int64_t>(), 1);
  EXPECT_EQ(test.get(9999).target.item<int64_t>(), 5);
  EXPECT_EQ(train.get(59999).data.mul(255).round().sum().item<double>(), 16684.0);
  EXPECT_EQ(test.get(9999).data.mul(255).round().sum().item<double>(), 24390.0);

  // The examples' pipeline: Normalize(0.5, 0.5), Stack, sequential batches of 64.
  auto ds = D::datasets::MNIST(kFashion).map(T::Normalize<>(0.5, 0.5)).map(T::Stack<>());
  EXPECT_EQ(ds.size().value(), 60000u);
  auto loader = D::make_data_loader<S::SequentialSampler>(std::move(ds), 64);
  auto it = loader->begin();
  D::Example<>& first = *it;
  EXPECT_EQ(first.data.sizes().vec(), (std::vector<int64_t>{64, 1, 28, 28}));
  EXPECT_EQ(first.target.sizes().vec(), (std::vector<int64_t>{64}));
  EXPECT_EQ(first.target.sum().item<int64_t>(), 263);
  EXPECT_NEAR(first.data.to(kDouble).sum().item<double>(), -21278.517647058827, 1e-2);
  size_t batches = 1;
  for (++it; it != loader->end(); ++it) ++batches;
  EXPECT_EQ(batches, 938u);  // ceil(60000 / 64)
}

TEST(DataLibtorchDataset, MapTransformsAndTypes) {
  Range r(5);
  EXPECT_EQ(r.size().value(), 5u);
  auto vec = r.get_batch({4, 1});
  ASSERT_EQ(vec.size(), 2u);
  EXPECT_EQ(vec[0].target.item<int64_t>(), 4);

  // Lambda per example, TensorLambda on the data, then Stack.
  auto mapped = r.map(T::Lambda<D::Example<>>([](D::Example<> e) {
                   e.target = e.target.add(100);
                   return e;
                 }))
                    .map(T::TensorLambda<>([](Tensor x) { return x.mul(2); }))
                    .map(T::Stack<>());
  static_assert(std::is_same_v<decltype(mapped)::BatchType, D::Example<>>);
  static_assert(!decltype(mapped)::is_stateful);
  D::Example<> b = mapped.get_batch({3, 0});
  EXPECT_TRUE(equal(b.data, tensor({6.0f, -6.0f, 0.0f, -0.0f}).view({2, 2})));
  EXPECT_EQ(flat(b.target), (std::vector<int64_t>{103, 100}));
  EXPECT_EQ(mapped.size().value(), 5u);
  EXPECT_EQ(r.calls->load(), 2 + 2);  // the lvalue map() copied r, sharing the counter

  // BatchLambda / Collate on the whole batch.
  auto counted = std::move(r).map(
      T::Collate<D::Example<>>([](std::vector<D::Example<>> v) { return v.back(); }));
  EXPECT_EQ(counted.get_batch({1, 2, 3}).target.item<int64_t>(), 3);
  auto sizes = Range(4).map(T::BatchLambda<std::vector<D::Example<>>, size_t>(
      [](std::vector<D::Example<>> v) { return v.size(); }));
  EXPECT_EQ(sizes.get_batch({0, 1, 2}), 3u);

  // datasets::TensorDataset: rows as TensorExample, stacked back by Stack<TensorExample>.
  Tensor m = arange(12, kFloat).view({4, 3});
  D::datasets::TensorDataset td(m);
  EXPECT_EQ(td.size().value(), 4u);
  EXPECT_TRUE(equal(td.get(2).data, m[2]));
  EXPECT_THROW(td.get(4), IndexError);
  auto tds = td.map(T::Stack<D::TensorExample>());
  Tensor rows = tds.get_batch({3, 1}).data;
  EXPECT_TRUE(equal(rows, m.index_select(0, tensor({3, 1}, kLong))));
  D::datasets::TensorDataset from_list(std::vector<Tensor>{m[0], m[1]});
  EXPECT_EQ(from_list.tensor.sizes().vec(), (std::vector<int64_t>{2, 3}));
  EXPECT_THROW(D::datasets::TensorDataset(std::vector<Tensor>{}), ValueError);
}

TEST(DataLibtorchTransforms, NormalizeStackErrors) {
  // Normalize: float32 C×1×1 parameters, (x - m[c]) / s[c] by hand.
  T::Normalize<> norm({1.0, 2.0}, {2.0, 4.0});
  EXPECT_EQ(norm.mean.sizes().vec(), (std::vector<int64_t>{2, 1, 1}));
  EXPECT_EQ(norm.stddev.dtype(), kFloat);
  Tensor img = arange(2 * 3 * 4, kFloat).view({2, 3, 4});
  Tensor out = norm(img);
  EXPECT_EQ(out[0][0][0].item<float>(), -0.5f);
  EXPECT_EQ(out[1][2][3].item<float>(), (23.0f - 2.0f) / 4.0f);
  // On a batch N×C×H×W (channels at dim -3) and a strided view.
  Tensor batch = img.unsqueeze(0).expand({3, 2, 3, 4});
  EXPECT_TRUE(allclose(norm(batch), out.unsqueeze(0).expand({3, 2, 3, 4})));
  Tensor strided = arange(48, kFloat).view({2, 4, 6}).slice(1, 0, 4, 2).slice(2, 1, 5, 2);
  EXPECT_TRUE(allclose(norm(strided), norm(strided.contiguous())));
  // One value broadcasts; a scalar is one value (libtorch's Normalize<>(0.5, 0.5)).
  T::Normalize<> half(0.5, 0.5);
  EXPECT_TRUE(allclose(half(img), img.sub(0.5).div(0.5)));
  // Through the Example interface: the target passes through.
  D::Example<> ex = half.apply({ones({1, 2, 2}), scalar_tensor(int64_t(3), kLong)});
  EXPECT_TRUE(allclose(ex.data, ones({1, 2, 2})));
  EXPECT_EQ(ex.target.item<int64_t>(), 3);
  // Zero-size input.
  EXPECT_EQ(half(empty({0, 1, 2, 2})).numel(), 0);
  EXPECT_THROW(norm(arange(24, kFloat).view({3, 2, 4})), Error);  // 3 channels, 2 values
  EXPECT_THROW(T::Normalize<>({1.0}, {0.0}), ValueError);
  EXPECT_THROW(T::Normalize<>(std::vector<double>{}, {1.0}), ValueError);
  EXPECT_THROW(half(arange(4, kLong).view({1, 2, 2})), TypeError);

  // Stack: a batch dim; targets stacked too.
  T::Stack<> stack;
  D::Example<> s = stack.apply_batch({{zeros({2}), scalar_tensor(int64_t(1), kLong)},
                                      {ones({2}), scalar_tensor(int64_t(2), kLong)}});
  EXPECT_EQ(s.data.sizes().vec(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(flat(s.target), (std::vector<int64_t>{1, 2}));
  EXPECT_THROW(stack.apply_batch({}), Error);
  EXPECT_THROW(stack.apply_batch({{zeros({2}), zeros({})}, {zeros({3}), zeros({})}}), Error);

  // ember's image transforms are TensorLambda<>s: callable and mappable.
  auto mirror = T::RandomHorizontalFlip(1.0);
  EXPECT_TRUE(equal(mirror(img), flip(img, {2})));
  auto as_double = Range(3).map(T::ConvertImageDtype(kDouble)).map(T::Stack<>());
  Tensor d = as_double.get_batch({2}).data;
  EXPECT_EQ(d.dtype(), kDouble);
  EXPECT_EQ(d[0][1].item<double>(), -2.0);
}

TEST(DataLibtorchSamplers, OrdersMatchLibtorch) {
  S::SequentialSampler seq(5);
  EXPECT_EQ(drain(seq, 2), (Idx{{0, 1}, {2, 3}, {4}}));
  EXPECT_FALSE(seq.next(2).has_value());
  seq.reset(3);
  EXPECT_EQ(drain(seq, 2), (Idx{{0, 1}, {2}}));
  EXPECT_EQ(seq.index(), 3u);
  S::SequentialSampler empty_seq(0);
  EXPECT_FALSE(empty_seq.next(4).has_value());

  // RandomSampler: a permutation per epoch, reset(new_size) resizes.
  S::RandomSampler rs(10);
  EXPECT_EQ(rs.index(), 0u);
  auto batches = drain(rs, 4);
  ASSERT_EQ(batches.size(), 3u);
  EXPECT_EQ(batches[2].size(), 2u);
  EXPECT_EQ(rs.index(), 10u);
  std::set<size_t> seen;
  for (auto& b : batches) seen.insert(b.begin(), b.end());
  EXPECT_EQ(seen, (std::set<size_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  rs.reset(3);
  auto small = drain(rs, 5);
  ASSERT_EQ(small.size(), 1u);
  EXPECT_EQ(std::set<size_t>(small[0].begin(), small[0].end()), (std::set<size_t>{0, 1, 2}));
  S::RandomSampler rs32(6, kInt);
  EXPECT_EQ(drain(rs32, 6).at(0).size(), 6u);
  EXPECT_THROW(S::RandomSampler(-1), ValueError);

  // The distributed samplers, against libtorch 1.13's output for the same calls.
  S::DistributedSequentialSampler d0(10, 3, 0), d2(10, 3, 2), dn(10, 3, 1, false);
  EXPECT_EQ(drain(d0, 3), (Idx{{0, 1, 2}, {3}}));
  EXPECT_EQ(drain(d2, 3), (Idx{{8, 9, 0}, {1}}));
  EXPECT_EQ(drain(dn, 3), (Idx{{3, 4, 5}}));
  d2.reset();
  EXPECT_EQ(drain(d2, 4), (Idx{{8, 9, 0, 1}}));
  d2.reset(5);
  EXPECT_EQ(drain(d2, 4), (Idx{{4, 0}}));
  S::DistributedSequentialSampler s7(7, 3, 2, false);
  EXPECT_EQ(drain(s7, 3), (Idx{{4, 5}}));

  S::DistributedRandomSampler r1(10), r3(10, 3, 1), r3n(10, 3, 0, false), r7(7, 3, 2);
  EXPECT_EQ(drain(r1, 3), (Idx{{0, 2, 1}, {5, 9, 8}, {4, 7, 6}, {3}}));
  EXPECT_EQ(drain(r3, 3), (Idx{{9, 1, 4}, {7}}));
  EXPECT_EQ(drain(r3n, 3), (Idx{{2, 4, 6}}));
  EXPECT_EQ(drain(r7, 3), (Idx{{1, 3, 0}}));
  r1.set_epoch(2);
  EXPECT_EQ(r1.epoch(), 2u);
  r1.reset();
  EXPECT_EQ(drain(r1, 3), (Idx{{5, 0, 3}, {1, 8, 4}, {6, 2, 7}, {9}}));
  r1.reset(5);
  EXPECT_EQ(drain(r1, 3), (Idx{{3, 0, 2}, {4, 1}}));
  r3.set_epoch(2);
  r3.reset(5);
  EXPECT_EQ(drain(r3, 3), (Idx{{3, 1}}));
  // More replicas than examples: the padding stays inside the dataset.
  S::DistributedRandomSampler tiny(2, 5, 4);
  for (auto& b : drain(tiny, 8))
    for (size_t i : b) EXPECT_LT(i, 2u);
  EXPECT_THROW(S::DistributedRandomSampler(10, 3, 3), ValueError);
  EXPECT_THROW(S::DistributedSequentialSampler(10, 0, 0), ValueError);

  S::StreamSampler st(7);
  std::vector<size_t> sizes;
  while (auto b = st.next(3)) sizes.push_back(*b);
  EXPECT_EQ(sizes, (std::vector<size_t>{3, 3, 1}));
  st.reset(2);
  auto b = st.next(3);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->size(), 2u);
  EXPECT_FALSE(st.next(3).has_value());
}

TEST(DataLibtorchLoader, StatelessBatchesOrdersAndWorkers) {
  // Sequential, stacked: 10 examples in batches of 4.
  auto seq = D::make_data_loader<S::SequentialSampler>(Range(10).map(T::Stack<>()),
                                                       D::DataLoaderOptions().batch_size(4));
  static_assert(std::is_same_v<std::decay_t<decltype(*seq)>,
                               D::StatelessDataLoader<D::datasets::MapDataset<Range, T::Stack<>>,
                                                      S::SequentialSampler>>);
  std::vector<int64_t> sizes;
  EXPECT_EQ(epoch_targets(*seq, &sizes), iota(10));
  EXPECT_EQ(sizes, (std::vector<int64_t>{4, 4, 2}));
  EXPECT_EQ(seq->options().batch_size, 4u);
  EXPECT_EQ(seq->options().max_jobs, 0u);
  // A second epoch starts over.
  EXPECT_EQ(epoch_targets(*seq), iota(10));

  // drop_last, and the batch size given alone.
  auto dl = D::make_data_loader<S::SequentialSampler>(Range(10).map(T::Stack<>()),
                                                      D::DataLoaderOptions(4).drop_last(true));
  sizes.clear();
  EXPECT_EQ(epoch_targets(*dl, &sizes), iota(8));
  EXPECT_EQ(sizes, (std::vector<int64_t>{4, 4}));
  auto plain = D::make_data_loader(Range(3).map(T::Stack<>()), 2);

  // The default RandomSampler: each epoch is a permutation.
  std::vector<int64_t> all = epoch_targets(*plain);
  EXPECT_EQ(std::set<int64_t>(all.begin(), all.end()), (std::set<int64_t>{0, 1, 2}));
  EXPECT_EQ(all.size(), 3u);

  // Without Stack a batch is the vector of examples.
  auto vec_loader = D::make_data_loader<S::SequentialSampler>(Range(5), 2);
  std::vector<size_t> lens;
  for (std::vector<D::Example<>>& batch : *vec_loader) {
    lens.push_back(batch.size());
    EXPECT_EQ(batch[0].data.sizes().vec(), (std::vector<int64_t>{2}));
  }
  EXPECT_EQ(lens, (std::vector<size_t>{2, 2, 1}));

  // Workers: the same batches in the same order, for any worker count and max_jobs.
  for (size_t workers : {1, 2, 3}) {
    for (std::optional<size_t> jobs : {std::optional<size_t>(), std::optional<size_t>(1)}) {
      auto w = D::make_data_loader<S::SequentialSampler>(
          Range(23).map(T::Stack<>()), D::DataLoaderOptions(4).workers(workers).max_jobs(jobs));
      for (int epoch = 0; epoch < 2; ++epoch) {
        sizes.clear();
        EXPECT_EQ(epoch_targets(*w, &sizes), iota(23)) << workers;
        EXPECT_EQ(sizes.size(), 6u);
      }
    }
  }
  // Without enforced ordering every batch still arrives once.
  auto unordered = D::make_data_loader<S::SequentialSampler>(
      Range(40).map(T::Stack<>()), D::DataLoaderOptions(3).workers(3).enforce_ordering(false));
  auto got = epoch_targets(*unordered);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, iota(40));

  // An explicit sampler: a replica's share.
  auto shard =
      D::make_data_loader(Range(10).map(T::Stack<>()), S::DistributedSequentialSampler(10, 3, 2),
                          D::DataLoaderOptions(3).workers(2));
  EXPECT_EQ(epoch_targets(*shard), (std::vector<int64_t>{8, 9, 0, 1}));

  // Breaking out of an epoch, then a full one.
  auto brk = D::make_data_loader<S::SequentialSampler>(Range(12).map(T::Stack<>()),
                                                       D::DataLoaderOptions(2).workers(2));
  for (auto& batch : *brk) {
    (void)batch;
    break;
  }
  EXPECT_EQ(epoch_targets(*brk), iota(12));

  // Iterator rules.
  auto one = D::make_data_loader<S::SequentialSampler>(Range(2).map(T::Stack<>()), 2);
  auto it = one->begin();
  EXPECT_FALSE(it == one->end());
  ++it;
  EXPECT_TRUE(it == one->end());
  EXPECT_THROW(*it, Error);
  EXPECT_THROW(++it, Error);
  auto end = one->end();
  EXPECT_THROW(*end, Error);

  // An empty dataset yields no batch.
  auto none = D::make_data_loader<S::SequentialSampler>(Range(0).map(T::Stack<>()), 2);
  EXPECT_TRUE(epoch_targets(*none).empty());
}

TEST(DataLibtorchLoader, ErrorsAndTimeout) {
  // An error on the main thread keeps its type; on a worker it arrives as WorkerException.
  Range bad(10);
  bad.fail_at = 5;
  auto inline_loader = D::make_data_loader<S::SequentialSampler>(Range(bad).map(T::Stack<>()), 2);
  size_t seen = 0;
  try {
    for (auto& batch : *inline_loader) {
      (void)batch;
      ++seen;
    }
    FAIL() << "expected the dataset error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("bad example 5"), std::string::npos);
  }
  EXPECT_EQ(seen, 2u);
  auto worker_loader = D::make_data_loader<S::SequentialSampler>(
      Range(bad).map(T::Stack<>()), D::DataLoaderOptions(2).workers(2));
  seen = 0;
  try {
    for (auto& batch : *worker_loader) {
      (void)batch;
      ++seen;
    }
    FAIL() << "expected a WorkerException";
  } catch (const D::WorkerException& e) {
    EXPECT_NE(std::string(e.what()).find("Original message: [Range] bad example 5"),
              std::string::npos)
        << e.what();
    EXPECT_THROW(std::rethrow_exception(e.original_exception), ValueError);
  }
  EXPECT_EQ(seen, 2u);

  // Options that only ember::data::DataLoader reads, bad sizes.
  EXPECT_THROW(D::make_data_loader(Range(4), D::DataLoaderOptions(2).shuffle(true)), ValueError);
  EXPECT_THROW(D::make_data_loader(Range(4), D::DataLoaderOptions(0)), ValueError);
  EXPECT_THROW(D::make_data_loader(Range(4), D::DataLoaderOptions(2).workers(1).max_jobs(0)),
               ValueError);

  // Timeout: a slow example and a 50 ms limit.
  struct Slow : D::datasets::Dataset<Slow> {
    D::Example<> get(size_t i) override {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      return {zeros({1}), scalar_tensor(int64_t(i), kLong)};
    }
    std::optional<size_t> size() const override { return 2; }
  };
  auto slow = D::make_data_loader<S::SequentialSampler>(
      Slow().map(T::Stack<>()),
      D::DataLoaderOptions(1).workers(1).timeout(std::chrono::milliseconds(50)));
  auto it = slow->begin();
  EXPECT_THROW((void)(it == slow->end()), Error);
}

namespace {

// A stateful dataset: hands out `total` examples in batches, then ends the epoch; thread-safe
// because the workers share it.
struct Countdown : D::datasets::StatefulDataset<Countdown> {
  explicit Countdown(size_t total) : total(total) {}
  Countdown(const Countdown& o) : StatefulDataset(o), total(o.total), next(o.next) {}
  std::optional<std::vector<D::Example<>>> get_batch(size_t batch_size) override {
    std::lock_guard<std::mutex> lk(m);
    if (next >= total) return std::nullopt;
    std::vector<D::Example<>> out;
    for (size_t i = 0; i < batch_size && next < total; ++i, ++next)
      out.push_back({zeros({1}), scalar_tensor(int64_t(next), kLong)});
    return out;
  }
  std::optional<size_t> size() const override { return total; }
  void reset() override { next = 0; }
  void save(serialize::OutputArchive&) const override {}
  void load(serialize::InputArchive&) override {}
  size_t total, next = 0;
  std::mutex m;
};

// A stream dataset: a request is a count.
struct Counter : D::datasets::StreamDataset<Counter> {
  std::vector<D::Example<>> get_batch(size_t n) override {
    std::vector<D::Example<>> out;
    for (size_t i = 0; i < n; ++i) out.push_back({zeros({1}), scalar_tensor(int64_t(n), kLong)});
    return out;
  }
  std::optional<size_t> size() const override { return std::nullopt; }
};

}  // namespace

TEST(DataLibtorchLoader, StatefulAndStream) {
  static_assert(Countdown::is_stateful);
  for (size_t workers : {0, 2}) {
    auto loader = D::make_data_loader(Countdown(7).map(T::Stack<>()),
                                      D::DataLoaderOptions(3).workers(workers));
    static_assert(
        std::is_same_v<std::decay_t<decltype(*loader)>,
                       D::StatefulDataLoader<D::datasets::MapDataset<Countdown, T::Stack<>>>>);
    for (int epoch = 0; epoch < 2; ++epoch) {
      auto got = epoch_targets(*loader);
      std::sort(got.begin(), got.end());
      EXPECT_EQ(got, iota(7)) << workers;
    }
  }
  auto stream = D::make_data_loader(Counter().map(T::Stack<>()), S::StreamSampler(7),
                                    D::DataLoaderOptions(3));
  std::vector<int64_t> sizes;
  epoch_targets(*stream, &sizes);
  EXPECT_EQ(sizes, (std::vector<int64_t>{3, 3, 1}));
  // A stream dataset has no size for the default sampler.
  EXPECT_THROW(D::make_data_loader<S::StreamSampler>(Counter(), 2), ValueError);
}

TEST(DataLibtorchLoader, SharedDataset) {
  auto shared = D::datasets::make_shared_dataset<Range>(6);
  auto loader =
      D::make_data_loader<S::SequentialSampler>(shared, D::DataLoaderOptions(4).workers(2));
  size_t n = 0;
  for (auto& batch : *loader) n += batch.size();
  EXPECT_EQ(n, 6u);
  EXPECT_EQ(shared->calls->load(), 6);  // the workers' copies share one Range
  EXPECT_EQ((*shared).n, 6u);
}
