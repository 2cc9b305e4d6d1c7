// char_lm: a character-level Transformer language model trained on the text of Debian's
// `fortunes` package (make demo-lm). The C++ twin of examples/char_lm.py: the same model,
// split, schedule, flags and output.
//
//   char_lm [--steps 800] [--seed 0] [--layers 4] [--d-model 128] [--heads 4] [--context 64]
//           [--batch-size 32] [--lr 4e-3] [--warmup 60] [--weight-decay 0.1] [--clip 1.0]
//           [--amp none|bf16] [--tie] [--eval-every 100] [--eval-batches 8] [--threads N]
//           [--prompt TEXT] [--sample-chars 300] [--temperature 0.8] [--top-k 40]
//           [--out char_lm_out] [--init CHECKPOINT] [--data /usr/share/games/fortunes]
//
// The model: token and position embeddings; --layers blocks of pre-LayerNorm causal
// self-attention (scaled_dot_product_attention with is_causal) and a GELU MLP (4× wide); a final
// LayerNorm; a linear head, or the token embedding's transpose with --tie. Each plain fortune
// file (not the .dat/.u8 indexes) is split once: its first 90% of characters train, the rest
// validate. AdamW (weight decay on matrices and embeddings only, betas 0.9/0.99), linear warmup
// then cosine decay to lr/10, gradients clipped to norm --clip. --amp bf16 runs forward and loss
// under CPU autocast with bfloat16.
//
// The end writes --out/char_lm.safetensors (parameters under "model.", the vocabulary's code
// points under "vocab", the sizes under "config": the layout examples/char_lm.py writes, so
// either can --init from the other's), loads it back into a fresh model, checks the outputs are
// identical, and samples --sample-chars characters after --prompt.

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "ember/amp.h"
#include "ember/ember.h"
#include "ember/nn.h"
#include "ember/nn/functional/attention.h"
#include "ember/nn/utils.h"
#include "ember/nn_ops.h"
#include "ember/optim.h"
#include "ember/serialize.h"

namespace nn = ember::nn;
using ember::Tensor;

namespace {

struct Args {
  int64_t steps = 800;
  uint64_t seed = 0;
  int64_t layers = 4, d_model = 128, heads = 4, context = 64, batch_size = 32;
  double lr = 4e-3;
  int64_t warmup = 60;
  double weight_decay = 0.1, clip = 1.0;
  bool amp = false, tie = false;
  int64_t eval_every = 100, eval_batches = 8;
  int threads = 0;
  std::string prompt = "The ";
  int64_t sample_chars = 300;
  double temperature = 0.8;
  int64_t top_k = 40;
  std::string out = "char_lm_out", init, data = "/usr/share/games/fortunes";
};

[[noreturn]] void usage(const std::string& error) {
  std::cerr << "char_lm: " << error
            << "\nusage: char_lm [--steps N] [--seed N] [--layers N] [--d-model N] [--heads N] "
               "[--context N] [--batch-size N] [--lr X] [--warmup N] [--weight-decay X] "
               "[--clip X] [--amp none|bf16] [--tie] [--eval-every N] [--eval-batches N] "
               "[--threads N] [--prompt TEXT] [--sample-chars N] [--temperature X] [--top-k N] "
               "[--out DIR] [--init CHECKPOINT] [--data DIR]\n";
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    if (k == "-h" || k == "--help") usage("train a character-level Transformer on the fortunes");
    if (k == "--tie") {
      a.tie = true;
      continue;
    }
    if (i + 1 >= argc) usage("missing value for " + k);
    std::string v = argv[++i];
    try {
      if (k == "--steps")
        a.steps = std::stoll(v);
      else if (k == "--seed")
        a.seed = std::stoull(v);
      else if (k == "--layers")
        a.layers = std::stoll(v);
      else if (k == "--d-model")
        a.d_model = std::stoll(v);
      else if (k == "--heads")
        a.heads = std::stoll(v);
      else if (k == "--context")
        a.context = std::stoll(v);
      else if (k == "--batch-size")
        a.batch_size = std::stoll(v);
      else if (k == "--lr")
        a.lr = std::stod(v);
      else if (k == "--warmup")
        a.warmup = std::stoll(v);
      else if (k == "--weight-decay")
        a.weight_decay = std::stod(v);
      else if (k == "--clip")
        a.clip = std::stod(v);
      else if (k == "--amp") {
        if (v != "none" && v != "bf16") usage("--amp takes none or bf16");
        a.amp = v == "bf16";
      } else if (k == "--eval-every")
        a.eval_every = std::stoll(v);
      else if (k == "--eval-batches")
        a.eval_batches = std::stoll(v);
      else if (k == "--threads")
        a.threads = std::stoi(v);
      else if (k == "--prompt")
        a.prompt = v;
      else if (k == "--sample-chars")
        a.sample_chars = std::stoll(v);
      else if (k == "--temperature")
        a.temperature = std::stod(v);
      else if (k == "--top-k")
        a.top_k = std::stoll(v);
      else if (k == "--out")
        a.out = v;
      else if (k == "--init")
        a.init = v;
      else if (k == "--data")
        a.data = v;
      else
        usage("unknown option " + k);
    } catch (const std::logic_error&) {
      usage("bad value '" + v + "' for " + k);
    }
  }
  if (std::min({a.layers, a.d_model, a.heads, a.context, a.batch_size, a.eval_batches,
                a.eval_every}) <= 0 ||
      a.steps < 0 || a.warmup < 0 || !(a.lr > 0) || a.threads < 0 || a.sample_chars < 0)
    usage("sizes, --eval-every, --eval-batches and --lr must be > 0; --steps, --warmup >= 0");
  if (a.d_model % a.heads) usage("--d-model must be a multiple of --heads");
  return a;
}

// ---- text ----------------------------------------------------------------------------------

// UTF-8 to code points; a malformed byte becomes U+FFFD (the fortunes are valid UTF-8).
std::u32string decode_utf8(const std::string& s) {
  std::u32string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    int n = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : -1;
    char32_t cp = n == 0 ? c : n == 1 ? c & 0x1F : n == 2 ? c & 0x0F : c & 0x07;
    bool ok = n >= 0 && i + size_t(n) < s.size();
    for (int j = 1; ok && j <= n; ++j) {
      auto b = static_cast<unsigned char>(s[i + size_t(j)]);
      if ((b >> 6) != 2) ok = false;
      cp = (cp << 6) | (b & 0x3F);
    }
    if (!ok) {
      out.push_back(0xFFFD);
      ++i;
      continue;
    }
    out.push_back(cp);
    i += size_t(n) + 1;
  }
  return out;
}

std::string encode_utf8(const std::u32string& s) {
  std::string out;
  for (char32_t c : s) {
    if (c < 0x80) {
      out += char(c);
    } else if (c < 0x800) {
      out += char(0xC0 | (c >> 6)), out += char(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      out += char(0xE0 | (c >> 12)), out += char(0x80 | ((c >> 6) & 0x3F));
      out += char(0x80 | (c & 0x3F));
    } else {
      out += char(0xF0 | (c >> 18)), out += char(0x80 | ((c >> 12) & 0x3F));
      out += char(0x80 | ((c >> 6) & 0x3F)), out += char(0x80 | (c & 0x3F));
    }
  }
  return out;
}

// Each plain file (in name order) split 90/10 into training and validation text.
std::pair<std::u32string, std::u32string> read_corpus(const std::string& root) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(root)) {
    std::string n = e.path().filename().string();
    auto ends = [&](const std::string& suffix) {
      return n.size() >= suffix.size() &&
             n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    if (e.is_symlink() || !e.is_regular_file() || ends(".dat") || ends(".u8") || n[0] == '.')
      continue;
    names.push_back(n);
  }
  std::sort(names.begin(), names.end());
  if (names.empty())
    throw std::runtime_error("no fortune files in " + root + " (install Debian's fortunes)");
  std::u32string train, val;
  for (const auto& n : names) {
    std::ifstream f(root + "/" + n, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    std::u32string text = decode_utf8(ss.str());
    size_t cut = text.size() - size_t(double(text.size()) * 0.1);
    train += text.substr(0, cut);
    val += text.substr(cut);
  }
  return {train, val};
}

struct Vocab {
  std::u32string chars;  // sorted code points
  std::map<char32_t, int64_t> index;
  explicit Vocab(std::u32string cs) : chars(std::move(cs)) {
    std::sort(chars.begin(), chars.end());
    chars.erase(std::unique(chars.begin(), chars.end()), chars.end());
    for (size_t i = 0; i < chars.size(); ++i) index[chars[i]] = int64_t(i);
  }
  int64_t size() const { return int64_t(chars.size()); }
  // Characters outside the vocabulary map to the first one.
  std::vector<int64_t> encode(const std::u32string& text) const {
    std::vector<int64_t> ids(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
      auto it = index.find(text[i]);
      ids[i] = it == index.end() ? 0 : it->second;
    }
    return ids;
  }
  std::u32string decode(const std::vector<int64_t>& ids) const {
    std::u32string s;
    for (int64_t i : ids) s += chars[size_t(i)];
    return s;
  }
};

// ---- model ---------------------------------------------------------------------------------

struct Config {
  int64_t vocab, context, d_model, heads, layers;
  bool tie;
};

struct SelfAttentionImpl : nn::Module {
  SelfAttentionImpl(int64_t d, int64_t heads)
      : heads(heads),
        qkv(register_module("qkv", nn::Linear(d, 3 * d))),
        proj(register_module("proj", nn::Linear(d, d))) {}
  Tensor forward(const Tensor& x) {
    int64_t b = x.size(0), t = x.size(1), c = x.size(2);
    std::vector<Tensor> z = qkv(x).split(c, 2);
    for (auto& h : z) h = h.view({b, t, heads, c / heads}).transpose(1, 2);
    Tensor y = ember::scaled_dot_product_attention(z[0], z[1], z[2], {}, 0.0, /*is_causal=*/true);
    return proj(y.transpose(1, 2).reshape({b, t, c}));
  }
  int64_t heads;
  nn::Linear qkv, proj;
};
EMBER_MODULE(SelfAttention);

struct BlockImpl : nn::Module {
  BlockImpl(int64_t d, int64_t heads)
      : ln1(register_module("ln1", nn::LayerNorm(nn::LayerNormOptions({d})))),
        attn(register_module("attn", SelfAttention(d, heads))),
        ln2(register_module("ln2", nn::LayerNorm(nn::LayerNormOptions({d})))),
        fc(register_module("fc", nn::Linear(d, 4 * d))),
        fc_proj(register_module("fc_proj", nn::Linear(4 * d, d))) {}
  Tensor forward(Tensor x) {
    x = x + attn(ln1(x));
    return x + fc_proj(ember::gelu(fc(ln2(x))));
  }
  nn::LayerNorm ln1;
  SelfAttention attn;
  nn::LayerNorm ln2;
  nn::Linear fc, fc_proj;
};
EMBER_MODULE(Block);

struct CharLMImpl : nn::Module {
  explicit CharLMImpl(const Config& c)
      : cfg(c),
        tok_emb(register_module("tok_emb", nn::Embedding(c.vocab, c.d_model))),
        pos_emb(register_module("pos_emb", nn::Embedding(c.context, c.d_model))),
        blocks(register_module("blocks", nn::ModuleList())),
        ln_f(register_module("ln_f", nn::LayerNorm(nn::LayerNormOptions({c.d_model})))) {
    for (int64_t i = 0; i < c.layers; ++i) {
      block_list.push_back(Block(c.d_model, c.heads));
      blocks->push_back(block_list.back());
    }
    if (!c.tie)
      head = register_module("head", nn::Linear(nn::LinearOptions(c.d_model, c.vocab).bias(false)));
  }
  Tensor forward(const Tensor& idx) {
    Tensor pos = ember::arange(idx.size(1), ember::TensorOptions().dtype(ember::kInt64));
    Tensor x = tok_emb(idx) + pos_emb(pos);
    for (auto& b : block_list) x = b(x);
    x = ln_f(x);
    return cfg.tie ? ember::linear(x, tok_emb->weight) : head(x);
  }
  Config cfg;
  nn::Embedding tok_emb, pos_emb;
  nn::ModuleList blocks;
  std::vector<Block> block_list;
  nn::LayerNorm ln_f;
  nn::Linear head{nullptr};
};
EMBER_MODULE(CharLM);

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// GPT-2's initialisation: N(0, 0.02) matrices and embeddings (residual projections
// N(0, 0.02/sqrt(2 layers))), zero biases, unit LayerNorm weights.
void init_weights(CharLM& model, int64_t layers) {
  ember::NoGradGuard no_grad;
  for (const auto& item : model->named_parameters()) {
    const std::string& name = item.key();
    Tensor p = item.value();
    if (ends_with(name, "bias"))
      p.zero_();
    else if (name.find(".ln") != std::string::npos || name.rfind("ln_", 0) == 0)
      p.fill_(1.0);
    else
      nn::init::normal_(
          p, 0.0, ends_with(name, "proj.weight") ? 0.02 / std::sqrt(2.0 * double(layers)) : 0.02);
  }
}

// ---- data, schedule, evaluation ------------------------------------------------------------

// Inputs and next-character targets (int64 (B, T)) of the windows starting at `starts`.
std::pair<Tensor, Tensor> make_batch(const std::vector<int64_t>& data,
                                     const std::vector<int64_t>& starts, int64_t context) {
  auto b = int64_t(starts.size());
  std::vector<int64_t> x(size_t(b * context)), y(size_t(b * context));
  for (int64_t i = 0; i < b; ++i)
    for (int64_t j = 0; j < context; ++j) {
      x[size_t(i * context + j)] = data[size_t(starts[size_t(i)] + j)];
      y[size_t(i * context + j)] = data[size_t(starts[size_t(i)] + j + 1)];
    }
  auto opts = ember::TensorOptions().dtype(ember::kInt64);
  return {ember::tensor(x, opts).view({b, context}), ember::tensor(y, opts).view({b, context})};
}

// Linear warmup to --lr over --warmup steps, then a cosine decay to lr/10 at --steps.
double lr_at(int64_t step, const Args& a) {
  if (step < a.warmup) return a.lr * double(step + 1) / double(a.warmup);
  double progress = double(step - a.warmup) / double(std::max<int64_t>(1, a.steps - a.warmup));
  return a.lr * (0.1 + 0.9 * 0.5 * (1.0 + std::cos(M_PI * std::min(progress, 1.0))));
}

// Mean cross-entropy (nats per character) over --eval-batches batches of windows spread evenly
// over `data` (numpy.linspace's positions, as the Python twin).
double evaluate(CharLM& model, const std::vector<int64_t>& data, const Args& a) {
  int64_t n = a.eval_batches * a.batch_size, hi = int64_t(data.size()) - a.context - 2;
  std::vector<int64_t> starts(static_cast<size_t>(n));
  double step = n > 1 ? double(hi) / double(n - 1) : 0.0;
  for (int64_t i = 0; i < n; ++i) starts[size_t(i)] = int64_t(double(i) * step);
  if (n > 1) starts.back() = hi;
  ember::NoGradGuard no_grad;
  model->eval();
  double total = 0;
  for (int64_t i = 0; i < n; i += a.batch_size) {
    std::vector<int64_t> part(starts.begin() + i, starts.begin() + i + a.batch_size);
    auto [x, y] = make_batch(data, part, a.context);
    Tensor logits;
    {
      ember::autocast::AutocastGuard guard(ember::kCPU, ember::kBFloat16, a.amp);
      logits = model(x);
    }
    logits = logits.to(ember::kFloat32);
    total += ember::cross_entropy(logits.view({-1, logits.size(-1)}), y.view({-1})).item<double>();
  }
  model->train();
  return total / double(a.eval_batches);
}

// --prompt followed by --sample-chars characters drawn at --temperature from the --top-k most
// likely.
std::u32string sample(CharLM& model, const Vocab& vocab, const Args& a) {
  ember::Generator gen;
  gen.manual_seed(a.seed + 1);
  std::vector<int64_t> ids = vocab.encode(decode_utf8(a.prompt));
  if (ids.empty()) ids.push_back(0);
  ember::NoGradGuard no_grad;
  model->eval();
  for (int64_t s = 0; s < a.sample_chars; ++s) {
    size_t from = ids.size() > size_t(a.context) ? ids.size() - size_t(a.context) : 0;
    std::vector<int64_t> window(ids.begin() + int64_t(from), ids.end());
    Tensor x = ember::tensor(window, ember::TensorOptions().dtype(ember::kInt64))
                   .view({1, int64_t(window.size())});
    Tensor logits;
    {
      ember::autocast::AutocastGuard guard(ember::kCPU, ember::kBFloat16, a.amp);
      logits = model(x);
    }
    Tensor z =
        logits.select(0, 0).select(0, -1).to(ember::kFloat64) / std::max(a.temperature, 1e-6);
    if (a.top_k > 0 && a.top_k < z.size(0)) {
      Tensor kth = std::get<0>(z.topk(a.top_k)).select(0, a.top_k - 1);
      z = z.masked_fill(z.lt(kth), -INFINITY);
    }
    Tensor next = ember::multinomial(z.softmax(0), 1, false, gen);
    ids.push_back(next.item<int64_t>());
  }
  model->train();
  return vocab.decode(ids);
}

// ---- checkpoint ----------------------------------------------------------------------------

void save_checkpoint(const std::string& path, CharLM& model, const Vocab& vocab) {
  ember::OrderedDict<std::string, Tensor> dict;
  for (const auto& item : model->state_dict()) dict.insert("model." + item.key(), item.value());
  std::vector<int64_t> cps(vocab.chars.begin(), vocab.chars.end());
  auto opts = ember::TensorOptions().dtype(ember::kInt64);
  dict.insert("vocab", ember::tensor(cps, opts));
  const Config& c = model->cfg;
  dict.insert("config", ember::tensor(std::vector<int64_t>{c.vocab, c.context, c.d_model, c.heads,
                                                           c.layers, int64_t(c.tie)},
                                      opts));
  ember::save(dict, path, {{"format", "ember.char_lm.v1"}});
}

// The model and vocabulary of a checkpoint written by save_checkpoint (or the Python twin).
std::pair<CharLM, Vocab> load_checkpoint(const std::string& path) {
  auto dict = ember::load_dict(path);
  if (!dict.contains("config") || !dict.contains("vocab"))
    throw std::runtime_error(path + " is not a char_lm checkpoint (no config/vocab)");
  Tensor c = dict["config"].to(ember::kInt64).contiguous();
  const int64_t* v = c.data_ptr<int64_t>();
  CharLM model(Config{v[0], v[1], v[2], v[3], v[4], v[5] != 0});
  Tensor cps = dict["vocab"].to(ember::kInt64).contiguous();
  std::u32string chars;
  for (int64_t i = 0; i < cps.numel(); ++i) chars += char32_t(cps.data_ptr<int64_t>()[i]);
  ember::OrderedDict<std::string, Tensor> sd;
  for (const auto& item : dict)
    if (item.key().rfind("model.", 0) == 0) sd.insert(item.key().substr(6), item.value());
  model->load_state_dict(sd);
  return {model, Vocab(chars)};
}

// One line redrawn in place on a terminal.
class Progress {
 public:
  explicit Progress(int64_t total) : total_(total), tty_(isatty(STDERR_FILENO)) {}
  void update(int64_t done, double loss, double tokens_per_s) {
    if (!tty_) return;
    auto now = std::chrono::steady_clock::now();
    if (done < total_ && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    int width = 30,
        filled = int(double(width) * double(done) / double(std::max<int64_t>(total_, 1)));
    std::fprintf(stderr, "\rstep %lld/%lld [%s%s] loss %.4f %.0f tok/s ", (long long)done,
                 (long long)total_, std::string(size_t(filled), '#').c_str(),
                 std::string(size_t(width - filled), '.').c_str(), loss, tokens_per_s);
    if (done >= total_) std::fprintf(stderr, "\n");
  }
  void clear() {
    if (tty_) std::fprintf(stderr, "\r%79s\r", "");
  }

 private:
  int64_t total_;
  bool tty_;
  std::chrono::steady_clock::time_point last_{};
};

int run(const Args& a) {
  using clock = std::chrono::steady_clock;
  if (a.threads > 0) ember::set_num_threads(a.threads);
  ember::manual_seed(a.seed);
  auto [train_text, val_text] = read_corpus(a.data);
  Vocab vocab(train_text + val_text);
  std::vector<int64_t> train_ids = vocab.encode(train_text), val_ids = vocab.encode(val_text);

  CharLM model(Config{vocab.size(), a.context, a.d_model, a.heads, a.layers, a.tie});
  if (!a.init.empty()) {
    auto [init, init_vocab] = load_checkpoint(a.init);
    if (init_vocab.chars != vocab.chars)
      throw std::runtime_error(a.init + " has another vocabulary");
    model->load_state_dict(init->state_dict());
    std::cout << "parameters from " << a.init << "\n";
  } else {
    init_weights(model, a.layers);
  }
  int64_t n_params = 0;
  for (const auto& p : model->parameters()) n_params += p.numel();
  std::cout << "ember " << ember::kVersion << " | char-level Transformer LM | " << a.layers
            << " layers, d " << a.d_model << ", " << a.heads << " heads, context " << a.context
            << ", " << n_params << " parameters | vocab " << vocab.size() << " | "
            << train_ids.size() << " training, " << val_ids.size()
            << " validation characters | amp " << (a.amp ? "bf16" : "none") << " | CPU kernels "
            << ember::cpu_capability() << " | threads " << ember::get_num_threads() << std::endl;

  std::vector<Tensor> decay, no_decay;
  for (const auto& p : model->parameters()) (p.dim() >= 2 ? decay : no_decay).push_back(p);
  std::vector<ember::optim::OptimizerParamGroup> groups;
  groups.emplace_back(
      decay, std::make_unique<ember::optim::AdamWOptions>(
                 ember::optim::AdamWOptions(a.lr).betas({0.9, 0.99}).weight_decay(a.weight_decay)));
  groups.emplace_back(no_decay,
                      std::make_unique<ember::optim::AdamWOptions>(
                          ember::optim::AdamWOptions(a.lr).betas({0.9, 0.99}).weight_decay(0.0)));
  ember::optim::AdamW opt(std::move(groups), ember::optim::AdamWOptions(a.lr));

  ember::Generator batch_gen;  // draws the training windows
  batch_gen.manual_seed(a.seed + 12345);
  std::printf("step 0: val loss %.4f\n", evaluate(model, val_ids, a));
  std::fflush(stdout);
  Progress bar(a.steps);
  double loss_sum = 0, train_secs = 0;
  int64_t loss_n = 0, tokens = 0;
  auto start = clock::now();
  const int64_t V = vocab.size();
  for (int64_t step = 0; step < a.steps; ++step) {
    auto t0 = clock::now();
    for (auto& g : opt.param_groups()) g.options().set_lr(lr_at(step, a));
    Tensor s =
        ember::randint(0, int64_t(train_ids.size()) - a.context - 1, {a.batch_size}, batch_gen);
    std::vector<int64_t> starts(s.data_ptr<int64_t>(), s.data_ptr<int64_t>() + a.batch_size);
    auto [x, y] = make_batch(train_ids, starts, a.context);
    Tensor loss;
    {
      ember::autocast::AutocastGuard guard(ember::kCPU, ember::kBFloat16, a.amp);
      Tensor logits = model(x);
      loss = ember::cross_entropy(logits.view({-1, V}), y.view({-1}));
    }
    opt.zero_grad();
    loss.backward();
    nn::utils::clip_grad_norm_(model->parameters(), a.clip);
    opt.step();
    loss_sum += loss.item<double>();
    ++loss_n;
    tokens += x.numel();
    train_secs += std::chrono::duration<double>(clock::now() - t0).count();
    bar.update(step + 1, loss_sum / double(loss_n), double(tokens) / train_secs);
    if ((step + 1) % a.eval_every == 0 || step + 1 == a.steps) {
      double val = evaluate(model, val_ids, a);
      bar.clear();
      std::printf("step %lld: train loss %.4f | val loss %.4f | lr %.2e | %.0f tokens/s\n",
                  (long long)(step + 1), loss_sum / double(loss_n), val, lr_at(step, a),
                  double(tokens) / train_secs);
      std::fflush(stdout);
      loss_sum = 0, loss_n = 0;
    }
  }
  double total = std::chrono::duration<double>(clock::now() - start).count();
  if (a.steps > 0)
    std::printf("trained %lld steps in %.1f s (%.1f s in steps): %.0f tokens/s\n",
                (long long)a.steps, total, train_secs, double(tokens) / train_secs);

  std::filesystem::create_directories(a.out);
  std::string path = a.out + "/char_lm.safetensors";
  save_checkpoint(path, model, vocab);
  auto [loaded, loaded_vocab] = load_checkpoint(path);
  auto [x, y] = make_batch(val_ids, {0, int64_t(val_ids.size()) / 2}, a.context);
  double diff;
  {
    ember::NoGradGuard no_grad;
    model->eval();
    loaded->eval();
    diff = (model(x) - loaded(x)).abs().max().item<double>();
    model->train();
  }
  bool ok = diff == 0 && loaded_vocab.chars == vocab.chars;
  std::printf("wrote %s; loaded back: max |logit difference| %g (%s)\n", path.c_str(), diff,
              ok ? "identical" : "MISMATCH");
  std::printf("sample (temperature %g, top-k %lld):\n%s\n", a.temperature, (long long)a.top_k,
              encode_utf8(sample(model, vocab, a)).c_str());
  if (!ok) {
    std::cerr << "char_lm: the checkpoint did not load back identically\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args a = parse(argc, argv);
  try {
    return run(a);
  } catch (const std::exception& e) {
    std::cerr << "char_lm: " << e.what() << "\n";
    return 1;
  }
}
