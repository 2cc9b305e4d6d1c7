// libtorch's one-line descriptions of the built-in layers (their pretty_print), so that
// `std::cout << model` prints what the same program prints against libtorch 1.13: the
// namespace prefix, `true`/`false`, `[3, 3]` for sizes, doubles through ostream's default format,
// and libtorch's choice of which options each layer shows (quirks included: SmoothL1Loss and
// HuberLoss print without parentheses, GELU without its approximation).
#include <cctype>
#include <ostream>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "ember/nn.h"

namespace ember::nn {
namespace detail {

namespace {

struct Printer {
  std::ostream& os;
  const std::string& ns;

  // "ember::nn::Linear(" (or "torch::nn::...").
  Printer& open(const char* type) {
    os << ns << "::nn::" << type << "(";
    return *this;
  }
};

template <typename T>
std::string seq(const T* data, size_t n) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < n; ++i) os << (i ? ", " : "") << data[i];
  os << "]";
  return os.str();
}

// libtorch prints an ExpandingArray<1> as its value and longer ones as a list.
template <size_t D>
std::string arr(const ExpandingArray<D>& a) {
  if (D == 1) return std::to_string(a[0]);
  return seq(a.data(), D);
}

template <size_t D>
std::string arr(const ExpandingArray<D, std::optional<int64_t>>& a) {
  auto one = [&](size_t i) { return a[i] ? std::to_string(*a[i]) : std::string("None"); };
  if (D == 1) return one(0);
  std::string s = "[";
  for (size_t i = 0; i < D; ++i) s += (i ? ", " : "") + one(i);
  return s + "]";
}

std::string vec(const std::vector<int64_t>& v) { return seq(v.data(), v.size()); }

std::string vec(const std::vector<double>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + print_double(v[i]);
  return s + "]";
}

const char* b(bool v) { return v ? "true" : "false"; }

// libtorch's enum names: "reflect" -> "kReflect", "bilinear" -> "kBilinear", "relu" -> "kReLU".
template <typename V>
std::string enum_k(const V& v) {
  std::string n = enum_name(v);
  if (n == "relu") return "kReLU";
  std::string out = "k";
  bool up = true;
  for (char c : n) {
    if (c == '-' || c == '_') {
      up = true;
      continue;
    }
    out += up ? char(std::toupper(static_cast<unsigned char>(c))) : c;
    up = false;
  }
  return out;
}

std::string d(double v) { return print_double(v); }

template <typename Impl, typename F>
bool try_print(const Module& m, F&& f) {
  if (const auto* p = dynamic_cast<const Impl*>(&m)) {
    f(*p);
    return true;
  }
  return false;
}

template <size_t D, typename Impl>
bool conv(const Module& m, Printer& pr, const char* type) {
  return try_print<Impl>(m, [&](const Impl& c) {
    const auto& o = c.options;
    pr.open(type);
    pr.os << o.in_channels() << ", " << o.out_channels() << ", kernel_size=" << arr(o.kernel_size())
          << ", stride=" << arr(o.stride());
    if constexpr (requires { o.output_padding(); }) {
      if (!(o.padding() == ExpandingArray<D>(0))) pr.os << ", padding=" << arr(o.padding());
      if (!(o.output_padding() == ExpandingArray<D>(0)))
        pr.os << ", output_padding=" << arr(o.output_padding());
    } else {
      std::visit(
          [&](const auto& p) {
            using P = std::decay_t<decltype(p)>;
            if constexpr (std::is_same_v<P, enumtype::kValid>)
              pr.os << ", padding='valid'";
            else if constexpr (std::is_same_v<P, enumtype::kSame>)
              pr.os << ", padding='same'";
            else if (!(p == ExpandingArray<D>(0)))
              pr.os << ", padding=" << arr(p);
          },
          o.padding());
    }
    if (!(o.dilation() == ExpandingArray<D>(1))) pr.os << ", dilation=" << arr(o.dilation());
    if (o.groups() != 1) pr.os << ", groups=" << o.groups();
    if (!o.bias()) pr.os << ", bias=false";
    if (!std::holds_alternative<enumtype::kZeros>(o.padding_mode()))
      pr.os << ", padding_mode=" << enum_k(o.padding_mode());
    pr.os << ")";
  });
}

template <typename Impl>
bool batch_norm(const Module& m, Printer& pr, const char* type) {
  return try_print<Impl>(m, [&](const Impl& n) {
    const auto& o = n.options;
    pr.open(type);
    pr.os << o.num_features() << ", eps=" << d(o.eps()) << ", momentum=";
    if constexpr (std::is_same_v<std::decay_t<decltype(o.momentum())>, std::optional<double>>)
      pr.os << (o.momentum() ? d(*o.momentum()) : std::string("None"));
    else
      pr.os << d(o.momentum());
    pr.os << ", affine=" << b(o.affine()) << ", track_running_stats=" << b(o.track_running_stats())
          << ")";
  });
}

template <typename Impl>
bool dropout(const Module& m, Printer& pr, const char* type) {
  return try_print<Impl>(m, [&](const Impl& x) {
    pr.open(type);
    pr.os << "p=" << d(x.options.p()) << ", inplace=" << b(x.options.inplace()) << ")";
  });
}

template <typename Impl>
bool max_pool(const Module& m, Printer& pr, const char* type) {
  return try_print<Impl>(m, [&](const Impl& x) {
    const auto& o = x.options;
    pr.open(type);
    pr.os << "kernel_size=" << arr(o.kernel_size()) << ", stride=" << arr(o.stride())
          << ", padding=" << arr(o.padding()) << ", dilation=" << arr(o.dilation())
          << ", ceil_mode=" << b(o.ceil_mode()) << ")";
  });
}

template <typename Impl>
bool avg_pool(const Module& m, Printer& pr, const char* type) {
  return try_print<Impl>(m, [&](const Impl& x) {
    const auto& o = x.options;
    pr.open(type);
    pr.os << "kernel_size=" << arr(o.kernel_size()) << ", stride=" << arr(o.stride())
          << ", padding=" << arr(o.padding()) << ")";
  });
}

template <typename Impl>
bool max_unpool(const Module& m, Printer& pr, const char* type) {
  return avg_pool<Impl>(m, pr, type);
}

template <typename Impl>
bool adaptive_pool(const Module& m, Printer& pr, const char* type) {
  return try_print<Impl>(m, [&](const Impl& x) {
    pr.open(type);
    pr.os << "output_size=" << arr(x.options.output_size()) << ")";
  });
}

template <typename Impl>
bool lp_pool(const Module& m, Printer& pr, const char* type) {
  return try_print<Impl>(m, [&](const Impl& x) {
    const auto& o = x.options;
    pr.open(type);
    pr.os << "norm_type=" << d(o.norm_type()) << ", kernel_size=" << arr(o.kernel_size())
          << ", stride=" << arr(o.stride()) << ", ceil_mode=" << b(o.ceil_mode()) << ")";
  });
}

template <typename Impl>
bool pad(const Module& m, Printer& pr, const char* type) {
  return try_print<Impl>(m, [&](const Impl& x) {
    pr.open(type);
    pr.os << "padding=" << seq(x.options.padding().data(), x.options.padding().size());
    if constexpr (requires { x.options.value(); }) pr.os << ", value=" << d(x.options.value());
    pr.os << ")";
  });
}

// Layers whose description is their name and "()" or, with the inplace option set,
// "(inplace=true)".
template <typename Impl>
bool inplace_only(const Module& m, Printer& pr, const char* type) {
  return try_print<Impl>(m, [&](const Impl& x) {
    pr.open(type);
    if (x.options.inplace()) pr.os << "inplace=true";
    pr.os << ")";
  });
}

template <typename Impl>
bool plain(const Module& m, Printer& pr, const char* type) {
  return try_print<Impl>(m, [&](const Impl&) {
    pr.open(type);
    pr.os << ")";
  });
}

template <typename Impl>
bool dim_only(const Module& m, Printer& pr, const char* type) {
  return try_print<Impl>(m, [&](const Impl& x) {
    pr.open(type);
    pr.os << "dim=" << x.options.dim() << ")";
  });
}

template <typename Impl>
bool rnn(const Module& m, Printer& pr, const char* type) {
  return try_print<Impl>(m, [&](const Impl& x) {
    const auto& o = x.options;
    pr.open(type);
    pr.os << "input_size=" << o.input_size() << ", hidden_size=" << o.hidden_size()
          << ", num_layers=" << o.num_layers() << ", bias=" << b(o.bias())
          << ", batch_first=" << b(o.batch_first()) << ", dropout=" << d(o.dropout())
          << ", bidirectional=" << b(o.bidirectional());
    if constexpr (requires { o.proj_size(); })
      if (o.proj_size() > 0) pr.os << ", proj_size=" << o.proj_size();
    pr.os << ")";
  });
}

template <typename Impl>
bool rnn_cell(const Module& m, Printer& pr, const char* type) {
  return try_print<Impl>(m, [&](const Impl& x) {
    const auto& o = x.options;
    pr.open(type);
    pr.os << o.input_size() << ", " << o.hidden_size();
    if (!o.bias()) pr.os << ", bias=false";
    if constexpr (requires { o.nonlinearity(); })
      if (!std::holds_alternative<enumtype::kTanh>(o.nonlinearity()))
        pr.os << ", nonlinearity=" << enum_k(o.nonlinearity());
    pr.os << ")";
  });
}

bool print_layer(const Module& m, Printer& pr) {
  std::ostream& os = pr.os;
  // Containers: the name alone; their children follow.
  if (dynamic_cast<const SequentialImpl*>(&m)) return (os << pr.ns << "::nn::Sequential"), true;
  if (dynamic_cast<const ModuleListImpl*>(&m)) return (os << pr.ns << "::nn::ModuleList"), true;
  if (dynamic_cast<const ModuleDictImpl*>(&m)) return (os << pr.ns << "::nn::ModuleDict"), true;

  if (try_print<LinearImpl>(m, [&](const LinearImpl& x) {
        pr.open("Linear");
        os << "in_features=" << x.options.in_features()
           << ", out_features=" << x.options.out_features() << ", bias=" << b(x.options.bias())
           << ")";
      }))
    return true;
  if (try_print<BilinearImpl>(m, [&](const BilinearImpl& x) {
        const auto& o = x.options;
        pr.open("Bilinear");
        os << "in1_features=" << o.in1_features() << ", in2_features=" << o.in2_features()
           << ", out_features=" << o.out_features() << ", bias=" << b(o.bias()) << ")";
      }))
    return true;
  if (plain<IdentityImpl>(m, pr, "Identity") || plain<FunctionalImpl>(m, pr, "Functional"))
    return true;
  if (try_print<FlattenImpl>(m, [&](const FlattenImpl& x) {
        pr.open("Flatten");
        os << "start_dim=" << x.options.start_dim() << ", end_dim=" << x.options.end_dim() << ")";
      }))
    return true;
  if (try_print<UnflattenImpl>(m, [&](const UnflattenImpl& x) {
        pr.open("Unflatten");
        os << "dim=" << x.options.dim() << ", unflattened_size={";
        const auto& s = x.options.sizes();
        for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
        os << "})";
      }))
    return true;

  if (conv<1, Conv1dImpl>(m, pr, "Conv1d") || conv<2, Conv2dImpl>(m, pr, "Conv2d") ||
      conv<3, Conv3dImpl>(m, pr, "Conv3d") ||
      conv<1, ConvTranspose1dImpl>(m, pr, "ConvTranspose1d") ||
      conv<2, ConvTranspose2dImpl>(m, pr, "ConvTranspose2d") ||
      conv<3, ConvTranspose3dImpl>(m, pr, "ConvTranspose3d"))
    return true;

  if (batch_norm<BatchNorm1dImpl>(m, pr, "BatchNorm1d") ||
      batch_norm<BatchNorm2dImpl>(m, pr, "BatchNorm2d") ||
      batch_norm<BatchNorm3dImpl>(m, pr, "BatchNorm3d") ||
      batch_norm<InstanceNorm1dImpl>(m, pr, "InstanceNorm1d") ||
      batch_norm<InstanceNorm2dImpl>(m, pr, "InstanceNorm2d") ||
      batch_norm<InstanceNorm3dImpl>(m, pr, "InstanceNorm3d"))
    return true;
  if (try_print<LayerNormImpl>(m, [&](const LayerNormImpl& x) {
        pr.open("LayerNorm");
        os << vec(x.options.normalized_shape()) << ", eps=" << d(x.options.eps())
           << ", elementwise_affine=" << b(x.options.elementwise_affine()) << ")";
      }))
    return true;
  if (try_print<GroupNormImpl>(m, [&](const GroupNormImpl& x) {
        pr.open("GroupNorm");
        os << x.options.num_groups() << ", " << x.options.num_channels()
           << ", eps=" << d(x.options.eps()) << ", affine=" << b(x.options.affine()) << ")";
      }))
    return true;
  if (try_print<LocalResponseNormImpl>(m, [&](const LocalResponseNormImpl& x) {
        const auto& o = x.options;
        pr.open("LocalResponseNorm");
        os << o.size() << ", alpha=" << d(o.alpha()) << ", beta=" << d(o.beta())
           << ", k=" << d(o.k()) << ")";
      }))
    return true;

  if (dropout<DropoutImpl>(m, pr, "Dropout") || dropout<Dropout1dImpl>(m, pr, "Dropout1d") ||
      dropout<Dropout2dImpl>(m, pr, "Dropout2d") || dropout<Dropout3dImpl>(m, pr, "Dropout3d") ||
      dropout<AlphaDropoutImpl>(m, pr, "AlphaDropout") ||
      dropout<FeatureAlphaDropoutImpl>(m, pr, "FeatureAlphaDropout"))
    return true;

  if (max_pool<MaxPool1dImpl>(m, pr, "MaxPool1d") || max_pool<MaxPool2dImpl>(m, pr, "MaxPool2d") ||
      max_pool<MaxPool3dImpl>(m, pr, "MaxPool3d") || avg_pool<AvgPool1dImpl>(m, pr, "AvgPool1d") ||
      avg_pool<AvgPool2dImpl>(m, pr, "AvgPool2d") || avg_pool<AvgPool3dImpl>(m, pr, "AvgPool3d") ||
      max_unpool<MaxUnpool1dImpl>(m, pr, "MaxUnpool1d") ||
      max_unpool<MaxUnpool2dImpl>(m, pr, "MaxUnpool2d") ||
      max_unpool<MaxUnpool3dImpl>(m, pr, "MaxUnpool3d") ||
      adaptive_pool<AdaptiveAvgPool1dImpl>(m, pr, "AdaptiveAvgPool1d") ||
      adaptive_pool<AdaptiveAvgPool2dImpl>(m, pr, "AdaptiveAvgPool2d") ||
      adaptive_pool<AdaptiveAvgPool3dImpl>(m, pr, "AdaptiveAvgPool3d") ||
      adaptive_pool<AdaptiveMaxPool1dImpl>(m, pr, "AdaptiveMaxPool1d") ||
      adaptive_pool<AdaptiveMaxPool2dImpl>(m, pr, "AdaptiveMaxPool2d") ||
      adaptive_pool<AdaptiveMaxPool3dImpl>(m, pr, "AdaptiveMaxPool3d") ||
      lp_pool<LPPool1dImpl>(m, pr, "LPPool1d") || lp_pool<LPPool2dImpl>(m, pr, "LPPool2d") ||
      lp_pool<LPPool3dImpl>(m, pr, "LPPool3d"))
    return true;

  // Activations.
  if (inplace_only<ReLUImpl>(m, pr, "ReLU") || inplace_only<ReLU6Impl>(m, pr, "ReLU6") ||
      inplace_only<SELUImpl>(m, pr, "SELU"))
    return true;
  if (plain<SiLUImpl>(m, pr, "SiLU") || plain<MishImpl>(m, pr, "Mish") ||
      plain<GELUImpl>(m, pr, "GELU") || plain<SigmoidImpl>(m, pr, "Sigmoid") ||
      plain<TanhImpl>(m, pr, "Tanh") || plain<SoftsignImpl>(m, pr, "Softsign") ||
      plain<TanhshrinkImpl>(m, pr, "Tanhshrink") || plain<LogSigmoidImpl>(m, pr, "LogSigmoid") ||
      plain<Softmax2dImpl>(m, pr, "Softmax2d") || plain<HardsigmoidImpl>(m, pr, "Hardsigmoid") ||
      plain<HardswishImpl>(m, pr, "Hardswish"))
    return true;
  if (try_print<LeakyReLUImpl>(m, [&](const LeakyReLUImpl& x) {
        pr.open("LeakyReLU");
        os << "negative_slope=" << d(x.options.negative_slope());
        if (x.options.inplace()) os << ", inplace=true";
        os << ")";
      }))
    return true;
  if (try_print<ELUImpl>(m, [&](const ELUImpl& x) {
        pr.open("ELU");
        os << "alpha=" << d(x.options.alpha()) << (x.options.inplace() ? ", inplace=true" : "")
           << ")";
      }))
    return true;
  if (try_print<CELUImpl>(m, [&](const CELUImpl& x) {
        pr.open("CELU");
        os << "alpha=" << d(x.options.alpha()) << (x.options.inplace() ? ", inplace=true" : "")
           << ")";
      }))
    return true;
  if (try_print<RReLUImpl>(m, [&](const RReLUImpl& x) {
        pr.open("RReLU");
        os << "lower=" << d(x.options.lower()) << ", upper=" << d(x.options.upper())
           << (x.options.inplace() ? ", inplace=true" : "") << ")";
      }))
    return true;
  if (try_print<HardtanhImpl>(m, [&](const HardtanhImpl& x) {
        pr.open("Hardtanh");
        os << "min_val=" << d(x.options.min_val()) << ", max_val=" << d(x.options.max_val())
           << (x.options.inplace() ? ", inplace=true" : "") << ")";
      }))
    return true;
  if (try_print<ThresholdImpl>(m, [&](const ThresholdImpl& x) {
        pr.open("Threshold");
        os << "threshold=" << d(x.options.threshold()) << ", value=" << d(x.options.value())
           << (x.options.inplace() ? ", inplace=true" : "") << ")";
      }))
    return true;
  if (try_print<SoftplusImpl>(m, [&](const SoftplusImpl& x) {
        pr.open("Softplus");
        os << "beta=" << d(x.options.beta()) << ", threshold=" << d(x.options.threshold()) << ")";
      }))
    return true;
  if (try_print<SoftshrinkImpl>(m, [&](const SoftshrinkImpl& x) {
        pr.open("Softshrink");
        os << d(x.options.lambda()) << ")";
      }))
    return true;
  if (try_print<HardshrinkImpl>(m, [&](const HardshrinkImpl& x) {
        pr.open("Hardshrink");
        os << d(x.options.lambda()) << ")";
      }))
    return true;
  if (try_print<PReLUImpl>(m, [&](const PReLUImpl& x) {
        pr.open("PReLU");
        os << "num_parameters=" << x.options.num_parameters() << ")";
      }))
    return true;
  if (dim_only<GLUImpl>(m, pr, "GLU") || dim_only<SoftmaxImpl>(m, pr, "Softmax") ||
      dim_only<LogSoftmaxImpl>(m, pr, "LogSoftmax") || dim_only<SoftminImpl>(m, pr, "Softmin"))
    return true;

  // Embeddings and recurrent layers.
  if (try_print<EmbeddingImpl>(m, [&](const EmbeddingImpl& x) {
        const auto& o = x.options;
        pr.open("Embedding");
        os << "num_embeddings=" << o.num_embeddings() << ", embedding_dim=" << o.embedding_dim();
        if (o.padding_idx()) os << ", padding_idx=" << *o.padding_idx();
        if (o.max_norm()) os << ", max_norm=" << d(*o.max_norm());
        if (o.norm_type() != 2) os << ", norm_type=" << d(o.norm_type());
        if (o.scale_grad_by_freq()) os << ", scale_grad_by_freq=true";
        if (o.sparse()) os << ", sparse=true";
        os << ")";
      }))
    return true;
  if (try_print<EmbeddingBagImpl>(m, [&](const EmbeddingBagImpl& x) {
        const auto& o = x.options;
        pr.open("EmbeddingBag");
        os << "num_embeddings=" << o.num_embeddings() << ", embedding_dim=" << o.embedding_dim();
        if (o.max_norm()) os << ", max_norm=" << d(*o.max_norm());
        if (o.norm_type() != 2) os << ", norm_type=" << d(o.norm_type());
        if (o.scale_grad_by_freq()) os << ", scale_grad_by_freq=true";
        if (o.sparse()) os << ", sparse=true";
        if (!std::holds_alternative<enumtype::kMean>(o.mode())) os << ", mode=" << enum_k(o.mode());
        if (o.include_last_offset()) os << ", include_last_offset=true";
        if (o.padding_idx()) os << ", padding_idx=" << *o.padding_idx();
        os << ")";
      }))
    return true;
  if (rnn<RNNImpl>(m, pr, "RNN") || rnn<LSTMImpl>(m, pr, "LSTM") || rnn<GRUImpl>(m, pr, "GRU") ||
      rnn_cell<RNNCellImpl>(m, pr, "RNNCell") || rnn_cell<LSTMCellImpl>(m, pr, "LSTMCell") ||
      rnn_cell<GRUCellImpl>(m, pr, "GRUCell"))
    return true;

  // Vision, padding and distance layers.
  if (try_print<PixelShuffleImpl>(m, [&](const PixelShuffleImpl& x) {
        pr.open("PixelShuffle");
        os << "upscale_factor=" << x.options.upscale_factor() << ")";
      }))
    return true;
  if (try_print<PixelUnshuffleImpl>(m, [&](const PixelUnshuffleImpl& x) {
        pr.open("PixelUnshuffle");
        os << "downscale_factor=" << x.options.downscale_factor() << ")";
      }))
    return true;
  if (try_print<ChannelShuffleImpl>(m, [&](const ChannelShuffleImpl& x) {
        pr.open("ChannelShuffle");
        os << "groups=" << x.options.groups() << ")";
      }))
    return true;
  if (try_print<UpsampleImpl>(m, [&](const UpsampleImpl& x) {
        const auto& o = x.options;
        pr.open("Upsample");
        if (o.scale_factor())
          os << "scale_factor=" << vec(*o.scale_factor());
        else if (o.size())
          os << "size=" << vec(*o.size());
        os << ", mode=" << enum_k(o.mode()) << ")";
      }))
    return true;
  if (try_print<FoldImpl>(m, [&](const FoldImpl& x) {
        const auto& o = x.options;
        pr.open("Fold");
        os << "output_size=" << arr(o.output_size()) << ", kernel_size=" << arr(o.kernel_size())
           << ", dilation=" << arr(o.dilation()) << ", padding=" << arr(o.padding())
           << ", stride=" << arr(o.stride()) << ")";
      }))
    return true;
  if (try_print<UnfoldImpl>(m, [&](const UnfoldImpl& x) {
        const auto& o = x.options;
        pr.open("Unfold");
        os << "kernel_size=" << arr(o.kernel_size()) << ", dilation=" << arr(o.dilation())
           << ", padding=" << arr(o.padding()) << ", stride=" << arr(o.stride()) << ")";
      }))
    return true;
  if (pad<ReflectionPad1dImpl>(m, pr, "ReflectionPad1d") ||
      pad<ReflectionPad2dImpl>(m, pr, "ReflectionPad2d") ||
      pad<ReflectionPad3dImpl>(m, pr, "ReflectionPad3d") ||
      pad<ReplicationPad1dImpl>(m, pr, "ReplicationPad1d") ||
      pad<ReplicationPad2dImpl>(m, pr, "ReplicationPad2d") ||
      pad<ReplicationPad3dImpl>(m, pr, "ReplicationPad3d") ||
      pad<ZeroPad2dImpl>(m, pr, "ZeroPad2d") || pad<ConstantPad1dImpl>(m, pr, "ConstantPad1d") ||
      pad<ConstantPad2dImpl>(m, pr, "ConstantPad2d") ||
      pad<ConstantPad3dImpl>(m, pr, "ConstantPad3d"))
    return true;
  if (try_print<CosineSimilarityImpl>(m, [&](const CosineSimilarityImpl& x) {
        pr.open("CosineSimilarity");
        os << "dim=" << x.options.dim() << ", eps=" << d(x.options.eps()) << ")";
      }))
    return true;
  if (try_print<PairwiseDistanceImpl>(m, [&](const PairwiseDistanceImpl& x) {
        pr.open("PairwiseDistance");
        os << "p=" << d(x.options.p()) << ", eps=" << d(x.options.eps())
           << ", keepdim=" << b(x.options.keepdim()) << ")";
      }))
    return true;

  // Losses.
  if (try_print<SmoothL1LossImpl>(m, [&](const auto&) { os << pr.ns << "::nn::SmoothL1Loss"; }) ||
      try_print<HuberLossImpl>(m, [&](const auto&) { os << pr.ns << "::nn::HuberLoss"; }))
    return true;
  if (try_print<TripletMarginLossImpl>(m, [&](const TripletMarginLossImpl& x) {
        const auto& o = x.options;
        pr.open("TripletMarginLoss");
        os << "margin=" << d(o.margin()) << ", p=" << d(o.p()) << ", eps=" << d(o.eps())
           << ", swap=" << b(o.swap()) << ")";
      }))
    return true;
  if (try_print<TripletMarginWithDistanceLossImpl>(
          m, [&](const TripletMarginWithDistanceLossImpl& x) {
            pr.open("TripletMarginWithDistanceLoss");
            os << "margin=" << d(x.options.margin()) << ", swap=" << b(x.options.swap()) << ")";
          }))
    return true;
  return plain<L1LossImpl>(m, pr, "L1Loss") || plain<MSELossImpl>(m, pr, "MSELoss") ||
         plain<KLDivLossImpl>(m, pr, "KLDivLoss") ||
         plain<PoissonNLLLossImpl>(m, pr, "PoissonNLLLoss") ||
         plain<HingeEmbeddingLossImpl>(m, pr, "HingeEmbeddingLoss") ||
         plain<MultiLabelMarginLossImpl>(m, pr, "MultiLabelMarginLoss") ||
         plain<SoftMarginLossImpl>(m, pr, "SoftMarginLoss") ||
         plain<CrossEntropyLossImpl>(m, pr, "CrossEntropyLoss") ||
         plain<NLLLossImpl>(m, pr, "NLLLoss") || plain<BCELossImpl>(m, pr, "BCELoss") ||
         plain<MultiLabelSoftMarginLossImpl>(m, pr, "MultiLabelSoftMarginLoss") ||
         plain<MultiMarginLossImpl>(m, pr, "MultiMarginLoss") ||
         plain<BCEWithLogitsLossImpl>(m, pr, "BCEWithLogitsLoss") ||
         plain<GaussianNLLLossImpl>(m, pr, "GaussianNLLLoss") ||
         plain<CosineEmbeddingLossImpl>(m, pr, "CosineEmbeddingLoss") ||
         plain<MarginRankingLossImpl>(m, pr, "MarginRankingLoss") ||
         plain<CTCLossImpl>(m, pr, "CTCLoss");
}

}  // namespace

std::string print_double(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

bool print_builtin(const Module& module, std::ostream& stream) {
  std::ostringstream os;
  Printer pr{os, module_namespace()};
  if (!print_layer(module, pr)) return false;
  std::string text = os.str();
  stream << text;
  // libtorch's printers that show a bool do so with `stream << std::boolalpha`, which stays set
  // on the caller's stream: a later `std::cout << true` prints "true". Programs see that, so
  // keep it.
  if (text.find("true") != std::string::npos || text.find("false") != std::string::npos)
    stream << std::boolalpha;
  return true;
}

}  // namespace detail
}  // namespace ember::nn
