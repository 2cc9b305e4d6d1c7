// fashion_mnist: the main job. Trains a small CNN on Fashion-MNIST with Adam, reports the
// train loss, test loss and test accuracy per epoch, and writes a checkpoint (safetensors) and an
// SVG plot of the curves. `make demo` runs it for 3 epochs.
//
//   fashion_mnist [--epochs 3] [--batch-size 64] [--lr 1e-3] [--threads N] [--seed 0]
//                 [--data /usr/share/datasets/fashion-mnist] [--out fashion_mnist_out]
//                 [--resume CHECKPOINT] [--limit N] [--test-limit N]
//                 [--ddp] [--checkpoint-dir DIR] [--checkpoint-every N] [--amp none|bf16]
//                 [--device cpu|cuda|cuda:N]
//
// --device cuda trains on the GPU: the model and the Adam state live there, every batch is
// copied to pinned host memory and then to the device with non_blocking copies. Without a GPU
// it stops with an error. With --amp bf16, autocast runs on the training device.
//
// --amp bf16 runs the forward passes and the loss under CPU autocast with bfloat16
// (ember::autocast::AutocastGuard): convolutions and linear layers compute in bfloat16, the
// parameters and the optimizer state stay float32.
//
// --ddp trains data-parallel on the processes `ember-run --nproc-per-node W` starts (RANK,
// WORLD_SIZE, MASTER_ADDR, MASTER_PORT): each rank takes its share of every global batch of
// --batch-size images, and DistributedDataParallel averages the gradients. --checkpoint-dir
// (alone or with --ddp) checkpoints at the end of every epoch and every --checkpoint-every
// steps, and a start finds the latest checkpoint there and resumes from the step after it
// (Note [Resumable training]).
//
// The model and recipe are PyTorch's classic example: conv(1→32, k3)-ReLU-maxpool2-
// conv(32→64, k3)-ReLU-maxpool2-flatten-linear(1600→128)-ReLU-linear(128→10), Adam(lr 1e-3),
// batch 64, images scaled to [0, 1] and standardised with the training set's mean and std.

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "ember/amp.h"
#include "ember/cuda.h"
#include "ember/data.h"
#include "ember/distributed.h"
#include "ember/ember.h"
#include "ember/nn.h"
#include "ember/nn/parallel/distributed.h"
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
  int64_t test_limit = 0;
  bool normalize = true;
  bool ddp = false;
  std::string checkpoint_dir;
  int64_t checkpoint_every = 0;
  bool amp = false;                   ///< --amp bf16
  ember::Device device{ember::kCPU};  ///< --device
};

// Fashion-MNIST's training-set pixel mean and standard deviation (of values in [0, 1]).
constexpr double kMean = 0.2860, kStd = 0.3530;

[[noreturn]] void usage(const std::string& error) {
  std::cerr
      << "fashion_mnist: " << error
      << "\nusage: fashion_mnist [--epochs N] [--batch-size N] [--lr X] [--threads N] "
         "[--seed N] [--data DIR] [--out DIR] [--resume CHECKPOINT] [--limit N] [--test-limit N] "
         "[--no-normalize] [--ddp] [--checkpoint-dir DIR] [--checkpoint-every N] "
         "[--amp none|bf16] [--device cpu|cuda|cuda:N]\n";
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
    if (k == "--ddp") {
      a.ddp = true;
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
      else if (k == "--test-limit")
        a.test_limit = std::stoll(v);
      else if (k == "--checkpoint-dir")
        a.checkpoint_dir = v;
      else if (k == "--checkpoint-every")
        a.checkpoint_every = std::stoll(v);
      else if (k == "--device") {
        if (v != "cpu" && v.rfind("cuda", 0) != 0) usage("--device takes cpu, cuda or cuda:N");
        a.device = ember::Device(v);
      } else if (k == "--amp") {
        if (v != "none" && v != "bf16") usage("--amp takes none or bf16");
        a.amp = v == "bf16";
      } else
        usage("unknown option " + k);
    } catch (const std::logic_error&) {
      usage("bad value '" + v + "' for " + k);
    }
  }
  if (a.epochs < 0 || a.batch_size <= 0 || !(a.lr > 0) || a.threads < 0 || a.limit < 0 ||
      a.test_limit < 0 || a.checkpoint_every < 0)
    usage("epochs, threads, limits and --checkpoint-every must be >= 0; batch size and lr > 0");
  if (a.checkpoint_every > 0 && a.checkpoint_dir.empty())
    usage("--checkpoint-every needs --checkpoint-dir");
  if (a.device.is_cuda() && (a.ddp || !a.checkpoint_dir.empty()))
    usage("--device cuda trains in the single-process loop (without --ddp or --checkpoint-dir)");
  if (a.device.is_cuda() && !a.resume.empty())
    usage("--resume loads the optimizer state on the CPU: resume with --device cpu");
  if (!a.resume.empty() && (a.ddp || !a.checkpoint_dir.empty()))
    usage(
        "--resume belongs to the single-process loop; with --ddp or --checkpoint-dir the job "
        "resumes from the latest checkpoint in --checkpoint-dir");
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
  void set_enabled(bool on) { tty_ = tty_ && on; }

 private:
  using clock = std::chrono::steady_clock;
  int epoch_, epochs_;
  int64_t total_;
  bool tty_;
  clock::time_point start_, last_{};
};

// A batch on the training device: through pinned memory with non_blocking copies on the GPU,
// unchanged on the CPU.
ember::data::Example<> to_device(ember::data::Example<> b, ember::Device device) {
  if (!device.is_cuda()) return b;
  b.data = ember::cuda::pin_memory(b.data.contiguous()).to(device, /*non_blocking=*/true);
  b.target = ember::cuda::pin_memory(b.target.contiguous()).to(device, /*non_blocking=*/true);
  return b;
}

ember::Tensor prepare(const ember::Tensor& images, const Args& a) {
  return a.normalize ? (images - kMean) / kStd : images;
}

std::pair<double, double> evaluate(Net& model, ember::data::Dataset& test, const Args& a) {
  ember::NoGradGuard no_grad;
  model->eval();
  double loss = 0;
  int64_t correct = 0, n = int64_t(test.size());
  if (a.test_limit > 0) n = std::min(n, a.test_limit);
  for (int64_t i = 0; i < n; i += 1000) {
    std::vector<size_t> idx;
    for (int64_t j = i; j < std::min(n, i + 1000); ++j) idx.push_back(size_t(j));
    ember::data::Example b = to_device(test.get_batch(idx), a.device);
    ember::Tensor logits;
    {
      ember::autocast::AutocastGuard amp(a.device.type(), ember::kBFloat16, a.amp);
      logits = model(prepare(b.data, a));
    }
    logits = logits.to(ember::kFloat32);
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
  // Checkpoints hold CPU tensors whatever the training device (cpu() of a CPU tensor is itself).
  for (const auto& item : model->state_dict())
    dict.insert("model." + item.key(), item.value().cpu());
  for (const auto& item : opt.state_dict()) dict.insert("optim." + item.key(), item.value().cpu());
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

// Note [Resumable training]
// The resumable loop (--ddp and/or --checkpoint-dir) makes every step a pure function of the
// checkpointed state. The order of the training set in each epoch is the next randperm(n) of a
// generator seeded with --seed, exactly as the single-process loop's DataLoader draws it, so
// global batch b of an epoch (that order's slice [b*B, (b+1)*B)) is the single-process run's
// batch b; rank r of W takes the r-th of W near-equal contiguous pieces of it. A checkpoint
// holds the model, the optimizer, the epoch and the number of batches done in it, the epoch's
// loss so far, the history, the order generator's state at the start of the epoch and the
// default generator's state; resuming continues at the next batch, so no step
// is lost or repeated and the parameters come out bit for bit as in an uninterrupted run (with
// a fixed thread count). The loss of a rank is its summed loss × W / (global batch size), so
// DDP's gradient average is exactly the gradient of the global batch's mean loss, whatever the
// split. Rank 0 writes the checkpoints (ember::save writes a temporary file and renames it, so
// a crash never leaves a torn one); the other ranks wait at a barrier until it is complete.

struct TrainState {
  int epoch = 1;            ///< the epoch to run next (or running)
  int64_t batch = 0;        ///< global batches of `epoch` already done
  int64_t global_step = 0;  ///< steps done since the start of training
  double loss_sum = 0;      ///< summed training loss of `epoch` so far (all ranks)
  int64_t seen = 0;         ///< images of `epoch` so far (all ranks)
  History h;
  ember::Tensor order_rng;  ///< the order generator's state at the start of `epoch`
};

std::string format_double(double v) {
  std::ostringstream s;
  s << std::setprecision(17) << v;
  return s.str();
}

std::string latest_checkpoint(const std::string& dir) { return dir + "/latest.safetensors"; }

void save_resumable(const std::string& path, Net& model, ember::optim::Optimizer& opt,
                    const TrainState& st, const Args& a) {
  ember::OrderedDict<std::string, ember::Tensor> dict;
  for (const auto& item : model->state_dict()) dict.insert("model." + item.key(), item.value());
  for (const auto& item : opt.state_dict()) dict.insert("optim." + item.key(), item.value());
  dict.insert("rng.default", ember::default_generator().get_state());
  dict.insert("rng.order", st.order_rng);
  std::map<std::string, std::string> meta{{"epoch", std::to_string(st.epoch)},
                                          {"batch", std::to_string(st.batch)},
                                          {"global_step", std::to_string(st.global_step)},
                                          {"loss_sum", format_double(st.loss_sum)},
                                          {"seen", std::to_string(st.seen)},
                                          {"train_loss", join(st.h.train_loss)},
                                          {"test_loss", join(st.h.test_loss)},
                                          {"test_acc", join(st.h.test_acc)},
                                          {"seed", std::to_string(a.seed)},
                                          {"batch_size", std::to_string(a.batch_size)},
                                          {"format", "ember.fashion_mnist.resumable.v1"}};
  ember::save(dict, path, meta);
}

TrainState load_resumable(const std::string& path, Net& model, ember::optim::Optimizer& opt,
                          const Args& a) {
  std::map<std::string, std::string> meta;
  auto dict = ember::load_dict(path, &meta);
  if (meta["format"] != "ember.fashion_mnist.resumable.v1")
    throw std::runtime_error(path + " is not a checkpoint of the resumable loop");
  if (meta["seed"] != std::to_string(a.seed) || meta["batch_size"] != std::to_string(a.batch_size))
    throw std::runtime_error(path + " was written with --seed " + meta["seed"] + " --batch-size " +
                             meta["batch_size"] +
                             "; resume with the same values or another --checkpoint-dir");
  ember::OrderedDict<std::string, ember::Tensor> model_sd, opt_sd;
  TrainState st;
  for (const auto& item : dict) {
    const std::string& k = item.key();
    if (k.rfind("model.", 0) == 0)
      model_sd.insert(k.substr(6), item.value());
    else if (k.rfind("optim.", 0) == 0)
      opt_sd.insert(k.substr(6), item.value());
    else if (k == "rng.default")
      ember::default_generator().set_state(item.value());
    else if (k == "rng.order")
      st.order_rng = item.value();
  }
  if (!st.order_rng.defined()) throw std::runtime_error(path + " has no rng.order");
  model->load_state_dict(model_sd);
  opt.load_state_dict(opt_sd);
  st.epoch = std::stoi(meta["epoch"]);
  st.batch = std::stoll(meta["batch"]);
  st.global_step = std::stoll(meta["global_step"]);
  st.loss_sum = std::stod(meta["loss_sum"]);
  st.seen = std::stoll(meta["seen"]);
  st.h.train_loss = split(meta["train_loss"]);
  st.h.test_loss = split(meta["test_loss"]);
  st.h.test_acc = split(meta["test_acc"]);
  return st;
}

int64_t env_int(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::stoll(v) : fallback;
}

int run_resumable(const Args& a) {
  namespace dist = ember::distributed;
  int rank = 0, world = 1;
  if (a.ddp) {
    dist::init_process_group("gloo");
    rank = dist::get_rank();
    world = dist::get_world_size();
  }
  auto barrier = [&] {
    if (a.ddp) dist::barrier();
  };
  const bool lead = rank == 0;
  if (a.threads > 0) ember::set_num_threads(a.threads);
  ember::manual_seed(a.seed);
  if (lead)
    std::cout << "ember " << ember::kVersion << " | Fashion-MNIST CNN | CPU kernels "
              << ember::cpu_capability() << " | threads " << ember::get_num_threads()
              << (a.ddp ? " | DDP on " + std::to_string(world) + " ranks (gloo)" : "") << "\n";

  ember::data::FashionMNIST train(a.data, ember::data::MNIST::Mode::kTrain);
  ember::data::FashionMNIST test(a.data, ember::data::MNIST::Mode::kTest);
  auto n_train = int64_t(train.size());
  if (a.limit > 0) n_train = std::min(n_train, a.limit);
  if (lead)
    std::cout << "data: " << n_train << " training and "
              << (a.test_limit > 0 ? std::min<int64_t>(a.test_limit, int64_t(test.size()))
                                   : int64_t(test.size()))
              << " test images from " << a.data << "\n";

  Net model;
  ember::optim::Adam opt(model->parameters(), ember::optim::AdamOptions(a.lr));
  TrainState st;
  ember::Generator order_gen;  // the DataLoader's shuffle generator in the single-process loop
  order_gen.manual_seed(a.seed);
  st.order_rng = order_gen.get_state();
  std::string ckpt_path;
  if (!a.checkpoint_dir.empty()) {
    ckpt_path = latest_checkpoint(a.checkpoint_dir);
    if (lead) std::filesystem::create_directories(a.checkpoint_dir);
    if (std::filesystem::exists(ckpt_path)) {
      st = load_resumable(ckpt_path, model, opt, a);
      if (lead)
        std::cout << "resumed from " << ckpt_path << " at epoch " << st.epoch << ", batch "
                  << st.batch << " (step " << st.global_step << ")\n";
    }
  }
  // DDP broadcasts rank 0's parameters and buffers, so every rank starts from the same ones.
  std::unique_ptr<ember::nn::parallel::DistributedDataParallel<Net>> ddp;
  if (a.ddp)
    ddp = std::make_unique<ember::nn::parallel::DistributedDataParallel<Net>>(
        model, dist::default_group());
  auto forward = [&](const ember::Tensor& x) { return ddp ? ddp->forward(x) : model(x); };
  if (lead) std::cout << model << "\n";

  auto checkpoint = [&] {
    if (ckpt_path.empty()) return;
    if (lead) save_resumable(ckpt_path, model, opt, st, a);
    barrier();
  };
  // Fault injection for the restart test: the last rank exits at this global step, once.
  const int64_t fault_step = env_int("EMBER_FAULT_AT_STEP", -1);
  const int64_t restarts = env_int("TORCHELASTIC_RESTART_COUNT", 0);

  const int64_t B = a.batch_size, n_batches = (n_train + B - 1) / B;
  // Sums of this rank's losses and images since the last checkpoint, added across ranks into
  // st.loss_sum / st.seen when one is written (so checkpoints hold whole-job numbers).
  double local_loss = 0;
  int64_t local_seen = 0;
  auto fold_local = [&] {
    auto t = ember::tensor({local_loss, double(local_seen)}, ember::kFloat64);
    if (a.ddp) dist::all_reduce(t);
    auto v = t.data_ptr<double>();
    st.loss_sum += v[0];
    st.seen += int64_t(v[1]);
    local_loss = 0;
    local_seen = 0;
  };

  while (st.epoch <= a.epochs) {
    order_gen.set_state(st.order_rng);
    ember::Tensor order =
        ember::randperm(n_train, order_gen, ember::TensorOptions().dtype(ember::kInt64));
    const int64_t* perm = order.data_ptr<int64_t>();
    Progress bar(st.epoch, a.epochs, n_train);
    bar.set_enabled(lead);
    for (; st.batch < n_batches; ++st.batch) {
      if (st.global_step == fault_step && restarts == 0 && rank == world - 1 && world > 1) {
        std::fprintf(stderr, "fashion_mnist: rank %d exits at step %lld (EMBER_FAULT_AT_STEP)\n",
                     rank, (long long)fault_step);
        std::fflush(stderr);
        std::_Exit(1);
      }
      int64_t lo = st.batch * B, size = std::min(B, n_train - lo);
      int64_t piece = size / world, extra = size % world;
      int64_t begin = lo + rank * piece + std::min<int64_t>(rank, extra);
      int64_t count = piece + (rank < extra ? 1 : 0);
      std::vector<size_t> idx;
      for (int64_t i = begin; i < begin + count; ++i) idx.push_back(size_t(perm[i]));
      ember::data::Example b = train.get_batch(idx);
      opt.zero_grad();
      ember::Tensor loss_sum;
      {
        ember::autocast::AutocastGuard amp(ember::kCPU, ember::kBFloat16, a.amp);
        loss_sum =
            ember::cross_entropy(forward(prepare(b.data, a)), b.target, {}, ember::Reduction::Sum);
      }
      (loss_sum * (double(world) / double(size))).backward();
      opt.step();
      local_loss += loss_sum.item<double>();
      local_seen += count;
      ++st.global_step;
      bar.update((st.batch + 1) * B > n_train ? n_train : (st.batch + 1) * B,
                 (st.loss_sum + local_loss * world) / double(st.seen + local_seen * world));
      if (a.checkpoint_every > 0 && st.global_step % a.checkpoint_every == 0 &&
          st.batch + 1 < n_batches) {
        fold_local();
        ++st.batch;  // the checkpoint resumes after this batch
        checkpoint();
        --st.batch;
      }
    }
    fold_local();
    double secs = bar.seconds();
    double test_loss = 0, acc = 0;
    if (lead) std::tie(test_loss, acc) = evaluate(model, test, a);
    if (a.ddp) {
      // Every rank keeps the same history (rank 0 evaluated).
      auto t = ember::tensor({test_loss, acc}, ember::kFloat64);
      dist::broadcast(t, 0);
      test_loss = t.data_ptr<double>()[0];
      acc = t.data_ptr<double>()[1];
    }
    st.h.train_loss.push_back(st.loss_sum / double(std::max<int64_t>(st.seen, 1)));
    st.h.test_loss.push_back(test_loss);
    st.h.test_acc.push_back(acc);
    if (lead) {
      std::printf(
          "epoch %d: train loss %.4f | test loss %.4f | test accuracy %.2f%% | %.1f s, "
          "%.0f images/s\n",
          st.epoch, st.h.train_loss.back(), test_loss, 100 * acc, secs, double(st.seen) / secs);
      std::fflush(stdout);
    }
    // The epoch-end checkpoint resumes at the start of the next epoch.
    st.epoch += 1, st.batch = 0, st.loss_sum = 0, st.seen = 0;
    st.order_rng = order_gen.get_state();
    checkpoint();
  }
  if (lead) {
    std::filesystem::create_directories(a.out);
    std::string ckpt = a.out + "/checkpoint.safetensors", plot = a.out + "/curves.svg";
    save_checkpoint(ckpt, model, opt, st.h, a);
    write_svg(plot, st.h);
    std::cout << "wrote " << ckpt << " and " << plot << "\n";
    if (!st.h.test_acc.empty())
      std::printf("final test accuracy: %.2f%%\n", 100 * st.h.test_acc.back());
  }
  barrier();
  if (a.ddp) dist::destroy_process_group();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args a = parse(argc, argv);
  try {
    if (a.ddp || !a.checkpoint_dir.empty()) return run_resumable(a);
    if (a.threads > 0) ember::set_num_threads(a.threads);
    ember::manual_seed(a.seed);
    if (a.device.is_cuda() && !ember::cuda_is_available()) {
      std::cerr << "fashion_mnist: --device " << a.device
                << ": no CUDA GPU is available (run with --device cpu)\n";
      return 1;
    }
    std::cout << "ember " << ember::kVersion << " | Fashion-MNIST CNN | CPU kernels "
              << ember::cpu_capability() << " | threads " << ember::get_num_threads()
              << (a.amp ? " | amp bf16" : "");
    if (a.device.is_cuda())
      std::cout << " | device " << a.device << " ("
                << ember::cuda::get_device_name(a.device.index() < 0 ? -1 : a.device.index())
                << ")";
    std::cout << "\n";

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
    if (a.device.is_cuda()) {
      ember::cuda::set_device(a.device.index() < 0 ? 0 : a.device.index());
      // The parameters move before the optimizer sees them: Adam's state is made on the device.
      model->to(a.device);
    }
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
      for (auto& host_batch : *loader) {
        ember::data::Example batch = to_device(host_batch, a.device);
        opt.zero_grad();
        ember::Tensor loss;
        {
          ember::autocast::AutocastGuard amp(a.device.type(), ember::kBFloat16, a.amp);
          loss = ember::cross_entropy(model(prepare(batch.data, a)), batch.target);
        }
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
