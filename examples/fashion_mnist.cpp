// fashion_mnist: the main job. Trains a small CNN on Fashion-MNIST with Adam, reports the
// train loss, test loss and test accuracy per epoch, and writes a checkpoint (safetensors) and an
// SVG plot of the curves. `make demo` runs it for 3 epochs.
//
//   fashion_mnist [--epochs 3] [--batch-size 64] [--lr 1e-3] [--threads N] [--seed 0]
//                 [--data /usr/share/datasets/fashion-mnist] [--out fashion_mnist_out]
//                 [--resume CHECKPOINT] [--limit N]
//
// The model and recipe are PyTorch's classic example: conv(1→32, k3)-ReLU-maxpool2-
// conv(32→64, k3)-ReLU-maxpool2-flatten-linear(1600→128)-ReLU-linear(128→10), Adam(lr 1e-3),
// batch 64, images scaled to [0, 1] and standardised with the training set's mean and std.

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "ember/data.h"
#include "ember/ember.h"
#include "ember/nn.h"
#include "ember/nn_ops.h"
#include "ember/optim.h"
#include "ember/serialize.h"

namespace nn = ember::nn;

namespace {

struct NetImpl : nn::Module {
  NetImpl()
      : conv1(register_module("conv1", nn::Conv2d(nn::Conv2dOptions(1, 32, 3)))),
        conv2(register_module("conv2", nn::Conv2d(nn::Conv2dOptions(32, 64, 3)))),
        pool(register_module("pool", nn::MaxPool2d(nn::MaxPool2dOptions(2)))),
        fc1(register_module("fc1", nn::Linear(1600, 128))),
        fc2(register_module("fc2", nn::Linear(128, 10))) {}

  ember::Tensor forward(const ember::Tensor& x) {
    ember::Tensor h = pool(ember::relu(conv1(x)));
    h = pool(ember::relu(conv2(h)));
    h = ember::relu(fc1(h.flatten(1)));
    return fc2(h);
  }

  nn::Conv2d conv1, conv2;
  nn::MaxPool2d pool;
  nn::Linear fc1, fc2;
};
EMBER_MODULE(Net);

struct Args {
  int epochs = 3;
  int64_t batch_size = 64;
  double lr = 1e-3;
  int threads = 0;
  uint64_t seed = 0;
  std::string data = "/usr/share/datasets/fashion-mnist";
  std::string out = "fashion_mnist_out";
  std::string resume;
  int64_t limit = 0;
  bool normalize = true;
};

// Fashion-MNIST's training-set pixel mean and standard deviation (of values in [0, 1]).
constexpr double kMean = 0.2860, kStd = 0.3530;

[[noreturn]] void usage(const std::string& error) {
  std::cerr
      << "fashion_mnist: " << error
      << "\nusage: fashion_mnist [--epochs N] [--batch-size N] [--lr X] [--threads N] "
         "[--seed N] [--data DIR] [--out DIR] [--resume CHECKPOINT] [--limit N] [--no-normalize]\n";
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    if (k == "-h" || k == "--help") usage("train a CNN on Fashion-MNIST");
    if (k == "--no-normalize") {
      a.normalize = false;
      continue;
    }
    if (i + 1 >= argc) usage("missing value for " + k);
    std::string v = argv[++i];
    try {
      if (k == "--epochs")
        a.epochs = std::stoi(v);
      else if (k == "--batch-size")
        a.batch_size = std::stoll(v);
      else if (k == "--lr")
        a.lr = std::stod(v);
      else if (k == "--threads")
        a.threads = std::stoi(v);
      else if (k == "--seed")
        a.seed = std::stoull(v);
      else if (k == "--data")
        a.data = v;
      else if (k == "--out")
        a.out = v;
      else if (k == "--resume")
        a.resume = v;
      else if (k == "--limit")
        a.limit = std::stoll(v);
      else
        usage("unknown option " + k);
    } catch (const std::logic_error&) {
      usage("bad value '" + v + "' for " + k);
    }
  }
  if (a.epochs < 0 || a.batch_size <= 0 || !(a.lr > 0) || a.threads < 0 || a.limit < 0)
    usage("epochs, threads and limit must be >= 0; batch size and lr > 0");
  return a;
}

struct History {
  std::vector<double> train_loss, test_loss, test_acc;
};

// One line redrawn in place on a terminal; plain lines per epoch otherwise.
class Progress {
 public:
  Progress(int epoch, int epochs, int64_t total)
      : epoch_(epoch),
        epochs_(epochs),
        total_(total),
        tty_(isatty(STDERR_FILENO)),
        start_(clock::now()) {}
  void update(int64_t done, double loss) {
    if (!tty_) return;
    auto now = clock::now();
    if (done < total_ && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    double secs = std::chrono::duration<double>(now - start_).count();
    int width = 30,
        filled = int(double(width) * double(done) / double(std::max<int64_t>(total_, 1)));
    std::fprintf(stderr, "\repoch %d/%d [%s%s] %lld/%lld loss %.4f %.0f img/s ", epoch_, epochs_,
                 std::string(size_t(filled), '#').c_str(),
                 std::string(size_t(width - filled), '.').c_str(), (long long)done,
                 (long long)total_, loss, secs > 0 ? double(done) / secs : 0.0);
    if (done >= total_) std::fprintf(stderr, "\n");
  }
  double seconds() const { return std::chrono::duration<double>(clock::now() - start_).count(); }

 private:
  using clock = std::chrono::steady_clock;
  int epoch_, epochs_;
  int64_t total_;
  bool tty_;
  clock::time_point start_, last_{};
};

ember::Tensor prepare(const ember::Tensor& images, const Args& a) {
  return a.normalize ? (images - kMean) / kStd : images;
}

std::pair<double, double> evaluate(Net& model, ember::data::Dataset& test, const Args& a) {
  ember::NoGradGuard no_grad;
  model->eval();
  double loss = 0;
  int64_t correct = 0, n = int64_t(test.size());
  for (int64_t i = 0; i < n; i += 1000) {
    std::vector<size_t> idx;
    for (int64_t j = i; j < std::min(n, i + 1000); ++j) idx.push_back(size_t(j));
    ember::data::Example b = test.get_batch(idx);
    ember::Tensor logits = model(prepare(b.data, a));
    loss += ember::cross_entropy(logits, b.target, {}, ember::Reduction::Sum).item<double>();
    correct += logits.argmax(1).eq(b.target).sum().item<int64_t>();
  }
  model->train();
  return {loss / double(n), double(correct) / double(n)};
}

// Two panels (loss, accuracy) of polylines over the epochs.
void write_svg(const std::string& path, const History& h) {
  const double W = 360, H = 240, L = 50, B = 30, T = 20;
  auto panel = [&](std::ostringstream& s, double x0, const std::string& title,
                   const std::vector<std::pair<std::string, const std::vector<double>*>>& series) {
    double lo = 1e300, hi = -1e300;
    for (auto& [_, v] : series)
      for (double y : *v) lo = std::min(lo, y), hi = std::max(hi, y);
    if (!(hi > lo)) hi = lo + 1;
    double pad = (hi - lo) * 0.1;
    lo -= pad, hi += pad;
    size_t n = 0;
    for (auto& [_, v] : series) n = std::max(n, v->size());
    auto px = [&](size_t i) {
      return x0 + L + (n > 1 ? double(i) / double(n - 1) : 0.5) * (W - L - 10);
    };
    auto py = [&](double y) { return T + (hi - y) / (hi - lo) * (H - T - B); };
    s << "<text x='" << x0 + W / 2 << "' y='14' text-anchor='middle'>" << title << "</text>\n";
    s << "<rect x='" << x0 + L << "' y='" << T << "' width='" << W - L - 10 << "' height='"
      << H - T - B << "' fill='none' stroke='#888'/>\n";
    for (int k = 0; k <= 4; ++k) {
      double y = lo + (hi - lo) * k / 4;
      s << "<text x='" << x0 + L - 4 << "' y='" << py(y) + 4
        << "' text-anchor='end' font-size='10'>" << std::setprecision(3) << y << "</text>\n";
    }
    for (size_t i = 0; i < n; ++i)
      s << "<text x='" << px(i) << "' y='" << H - B + 14 << "' text-anchor='middle' "
        << "font-size='10'>" << i + 1 << "</text>\n";
    s << "<text x='" << x0 + L + (W - L) / 2 << "' y='" << H - 4
      << "' text-anchor='middle' font-size='11'>epoch</text>\n";
    const char* colors[] = {"#1f77b4", "#d62728", "#2ca02c"};
    int c = 0;
    for (auto& [name, v] : series) {
      s << "<polyline fill='none' stroke-width='2' stroke='" << colors[c] << "' points='";
      for (size_t i = 0; i < v->size(); ++i) s << px(i) << "," << py((*v)[i]) << " ";
      s << "'/>\n";
      for (size_t i = 0; i < v->size(); ++i)
        s << "<circle r='3' fill='" << colors[c] << "' cx='" << px(i) << "' cy='" << py((*v)[i])
          << "'/>\n";
      s << "<text x='" << x0 + L + 8 << "' y='" << T + 14 + 14 * c << "' font-size='11' fill='"
        << colors[c] << "'>" << name << "</text>\n";
      ++c;
    }
  };
  std::ostringstream s;
  s << "<svg xmlns='http://www.w3.org/2000/svg' width='" << 2 * W << "' height='" << H
    << "' font-family='sans-serif'>\n<rect width='100%' height='100%' fill='white'/>\n";
  panel(s, 0, "loss", {{"train", &h.train_loss}, {"test", &h.test_loss}});
  panel(s, W, "test accuracy", {{"test", &h.test_acc}});
  s << "</svg>\n";
  std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp);
    f << s.str();
    if (!f) throw std::runtime_error("cannot write " + path);
  }
  std::filesystem::rename(tmp, path);
}

std::string join(const std::vector<double>& v) {
  std::ostringstream s;
  s << std::setprecision(17);
  for (size_t i = 0; i < v.size(); ++i) s << (i ? "," : "") << v[i];
  return s.str();
}

std::vector<double> split(const std::string& s) {
  std::vector<double> v;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) v.push_back(std::stod(item));
  return v;
}

void save_checkpoint(const std::string& path, Net& model, ember::optim::Optimizer& opt,
                     const History& h, const Args& a) {
  ember::OrderedDict<std::string, ember::Tensor> dict;
  for (const auto& item : model->state_dict()) dict.insert("model." + item.key(), item.value());
  for (const auto& item : opt.state_dict()) dict.insert("optim." + item.key(), item.value());
  std::map<std::string, std::string> meta{{"epochs_done", std::to_string(h.test_acc.size())},
                                          {"train_loss", join(h.train_loss)},
                                          {"test_loss", join(h.test_loss)},
                                          {"test_acc", join(h.test_acc)},
                                          {"seed", std::to_string(a.seed)},
                                          {"format", "ember.fashion_mnist.v1"}};
  ember::save(dict, path, meta);
}

int load_checkpoint(const std::string& path, Net& model, ember::optim::Optimizer& opt, History& h) {
  std::map<std::string, std::string> meta;
  auto dict = ember::load_dict(path, &meta);
  ember::OrderedDict<std::string, ember::Tensor> model_sd, opt_sd;
  for (const auto& item : dict) {
    const std::string& k = item.key();
    if (k.rfind("model.", 0) == 0)
      model_sd.insert(k.substr(6), item.value());
    else if (k.rfind("optim.", 0) == 0)
      opt_sd.insert(k.substr(6), item.value());
  }
  model->load_state_dict(model_sd);
  opt.load_state_dict(opt_sd);
  h.train_loss = split(meta["train_loss"]);
  h.test_loss = split(meta["test_loss"]);
  h.test_acc = split(meta["test_acc"]);
  return int(h.test_acc.size());
}

}  // namespace

int main(int argc, char** argv) {
  Args a = parse(argc, argv);
  try {
    if (a.threads > 0) ember::set_num_threads(a.threads);
    ember::manual_seed(a.seed);
    std::cout << "ember " << ember::kVersion << " | Fashion-MNIST CNN | CPU kernels "
              << ember::cpu_capability() << " | threads " << ember::get_num_threads() << "\n";

    auto train =
        std::make_shared<ember::data::FashionMNIST>(a.data, ember::data::MNIST::Mode::kTrain);
    ember::data::FashionMNIST test(a.data, ember::data::MNIST::Mode::kTest);
    std::shared_ptr<ember::data::Dataset> train_set = train;
    if (a.limit > 0 && size_t(a.limit) < train->size()) {
      std::vector<size_t> idx(static_cast<size_t>(a.limit));
      for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
      train_set = std::make_shared<ember::data::Subset>(train, idx);
    }
    std::cout << "data: " << train_set->size() << " training and " << test.size()
              << " test images from " << a.data << "\n";

    Net model;
    ember::optim::Adam opt(model->parameters(), ember::optim::AdamOptions(a.lr));
    History h;
    int start = 0;
    if (!a.resume.empty()) {
      start = load_checkpoint(a.resume, model, opt, h);
      std::cout << "resumed from " << a.resume << " after epoch " << start << "\n";
    }
    std::cout << model << "\n";

    auto loader = ember::data::make_data_loader(train_set,
                                                ember::data::DataLoaderOptions(size_t(a.batch_size))
                                                    .shuffle(true)
                                                    .seed(a.seed + uint64_t(start)));
    auto n_train = int64_t(train_set->size());
    for (int epoch = start + 1; epoch <= a.epochs; ++epoch) {
      Progress bar(epoch, a.epochs, n_train);
      double loss_sum = 0;
      int64_t seen = 0;
      for (auto& batch : *loader) {
        opt.zero_grad();
        ember::Tensor loss = ember::cross_entropy(model(prepare(batch.data, a)), batch.target);
        loss.backward();
        opt.step();
        int64_t bs = batch.data.size(0);
        loss_sum += loss.item<double>() * double(bs);
        seen += bs;
        bar.update(seen, loss_sum / double(seen));
      }
      double secs = bar.seconds();
      auto [test_loss, acc] = evaluate(model, test, a);
      h.train_loss.push_back(loss_sum / double(std::max<int64_t>(seen, 1)));
      h.test_loss.push_back(test_loss);
      h.test_acc.push_back(acc);
      std::printf(
          "epoch %d: train loss %.4f | test loss %.4f | test accuracy %.2f%% | %.1f s, "
          "%.0f images/s\n",
          epoch, h.train_loss.back(), test_loss, 100 * acc, secs, double(seen) / secs);
      std::fflush(stdout);
    }
    std::filesystem::create_directories(a.out);
    std::string ckpt = a.out + "/checkpoint.safetensors", plot = a.out + "/curves.svg";
    save_checkpoint(ckpt, model, opt, h, a);
    write_svg(plot, h);
    std::cout << "wrote " << ckpt << " and " << plot << "\n";
    if (!h.test_acc.empty()) std::printf("final test accuracy: %.2f%%\n", 100 * h.test_acc.back());
  } catch (const std::exception& e) {
    std::cerr << "fashion_mnist: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
