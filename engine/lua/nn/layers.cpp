// Part of require 'nn.core': the built-in layers (libtorch modules) and nn.Sequential, each a
// constructor taking PyTorch's arguments and an options table; dimensions are 1-based.
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/modules/pooling.h>
#include <torch/nn/modules/rnn.h>

#include "engine/lua/nn/nn_tables.hpp"
#include "engine/nn/batchnorm.hpp"
#include "engine/nn/layers.hpp"

namespace engine::lua {
namespace {

using torch::nn::AnyModule;

int l_linear(lua_State* L) {
  return guarded(L, [&] {
    const int64_t in = check_integer(L, 1, "nn.Linear"), out = check_integer(L, 2, "nn.Linear");
    Options o(L, 3, "nn.Linear", {"bias"});
    return push_layer<torch::nn::LinearImpl>(
        L, torch::nn::LinearOptions(in, out).bias(o.boolean("bias", true)));
  });
}

template <size_t D, class Impl, class Opts>
int conv_layer(lua_State* L, const char* name) {
  return guarded(L, [&] {
    const int64_t in = check_integer(L, 1, name), out = check_integer(L, 2, name);
    const auto kernel = size_list(L, 3, std::string(name) + ": kernel_size", D);
    Options o(L, 4, name, {"stride", "padding", "dilation", "groups", "bias", "padding_mode"});
    Opts opts{in, out, torch::ExpandingArray<D>(kernel)};
    opts.stride(torch::ExpandingArray<D>(o.integers("stride", std::vector<int64_t>(D, 1), D)))
        .padding(torch::ExpandingArray<D>(o.integers("padding", std::vector<int64_t>(D, 0), D)))
        .dilation(torch::ExpandingArray<D>(o.integers("dilation", std::vector<int64_t>(D, 1), D)))
        .groups(o.integer("groups", 1))
        .bias(o.boolean("bias", true));
    const std::string mode = o.string("padding_mode", "zeros");
    if (mode == "reflect")
      opts.padding_mode(torch::kReflect);
    else if (mode == "replicate")
      opts.padding_mode(torch::kReplicate);
    else if (mode == "circular")
      opts.padding_mode(torch::kCircular);
    else if (mode != "zeros")
      throw ArgumentError(std::string(name) +
                          ": padding_mode must be zeros, reflect, replicate or circular");
    return push_layer<Impl>(L, opts);
  });
}

int l_conv1d(lua_State* L) {
  return conv_layer<1, torch::nn::Conv1dImpl, torch::nn::Conv1dOptions>(L, "nn.Conv1d");
}
int l_conv2d(lua_State* L) {
  return conv_layer<2, torch::nn::Conv2dImpl, torch::nn::Conv2dOptions>(L, "nn.Conv2d");
}
int l_conv3d(lua_State* L) {
  return conv_layer<3, torch::nn::Conv3dImpl, torch::nn::Conv3dOptions>(L, "nn.Conv3d");
}

int l_maxpool2d(lua_State* L) {
  return guarded(L, [&] {
    const auto k = size_list(L, 1, "nn.MaxPool2d: kernel_size", 2);
    Options o(L, 2, "nn.MaxPool2d", {"stride", "padding", "dilation", "ceil_mode"});
    torch::nn::MaxPool2dOptions opts{torch::ExpandingArray<2>(k)};
    opts.stride(torch::ExpandingArray<2>(o.integers("stride", k, 2)))
        .padding(torch::ExpandingArray<2>(o.integers("padding", {0, 0}, 2)))
        .dilation(torch::ExpandingArray<2>(o.integers("dilation", {1, 1}, 2)))
        .ceil_mode(o.boolean("ceil_mode", false));
    return push_layer<torch::nn::MaxPool2dImpl>(L, opts);
  });
}

int l_avgpool2d(lua_State* L) {
  return guarded(L, [&] {
    const auto k = size_list(L, 1, "nn.AvgPool2d: kernel_size", 2);
    Options o(L, 2, "nn.AvgPool2d", {"stride", "padding", "ceil_mode", "count_include_pad"});
    torch::nn::AvgPool2dOptions opts{torch::ExpandingArray<2>(k)};
    opts.stride(torch::ExpandingArray<2>(o.integers("stride", k, 2)))
        .padding(torch::ExpandingArray<2>(o.integers("padding", {0, 0}, 2)))
        .ceil_mode(o.boolean("ceil_mode", false))
        .count_include_pad(o.boolean("count_include_pad", true));
    return push_layer<torch::nn::AvgPool2dImpl>(L, opts);
  });
}

int l_adaptive_avgpool2d(lua_State* L) {
  return guarded(L, [&] {
    const auto s = size_list(L, 1, "nn.AdaptiveAvgPool2d: output_size", 2);
    return push_layer<torch::nn::AdaptiveAvgPool2dImpl>(
        L, torch::nn::AdaptiveAvgPool2dOptions(
               torch::ExpandingArrayWithOptionalElem<2>({s[0], s[1]})));
  });
}

// The engine's own BatchNorm (engine/nn/batchnorm.hpp): libtorch's results, and statistics
// over the whole data-parallel batch when the trainer synchronises it.
int batchnorm(lua_State* L, nn::BatchNormKind kind, const char* name) {
  return guarded(L, [&] {
    const int64_t n = check_integer(L, 1, name);
    Options o(L, 2, name, {"eps", "momentum", "affine", "track_running_stats"});
    return push_layer<nn::BatchNormImpl>(
        L, kind,
        torch::nn::BatchNormOptions(n)
            .eps(o.number("eps", 1e-5))
            .momentum(o.number("momentum", 0.1))
            .affine(o.boolean("affine", true))
            .track_running_stats(o.boolean("track_running_stats", true)));
  });
}

int l_batchnorm1d(lua_State* L) {
  return batchnorm(L, nn::BatchNormKind::k1d, "nn.BatchNorm1d");
}
int l_batchnorm2d(lua_State* L) {
  return batchnorm(L, nn::BatchNormKind::k2d, "nn.BatchNorm2d");
}
int l_batchnorm3d(lua_State* L) {
  return batchnorm(L, nn::BatchNormKind::k3d, "nn.BatchNorm3d");
}
int l_sync_batchnorm(lua_State* L) {
  return batchnorm(L, nn::BatchNormKind::kSync, "nn.SyncBatchNorm");
}

int l_layernorm(lua_State* L) {
  return guarded(L, [&] {
    const auto shape = integer_list(L, 1, "nn.LayerNorm: normalized_shape");
    Options o(L, 2, "nn.LayerNorm", {"eps", "elementwise_affine"});
    return push_layer<torch::nn::LayerNormImpl>(
        L, torch::nn::LayerNormOptions(shape)
               .eps(o.number("eps", 1e-5))
               .elementwise_affine(o.boolean("elementwise_affine", true)));
  });
}

int l_local_response_norm(lua_State* L) {
  return guarded(L, [&] {
    const int64_t size = check_integer(L, 1, "nn.LocalResponseNorm");
    Options o(L, 2, "nn.LocalResponseNorm", {"alpha", "beta", "k"});
    return push_layer<torch::nn::LocalResponseNormImpl>(L, torch::nn::LocalResponseNormOptions(size)
                                                               .alpha(o.number("alpha", 1e-4))
                                                               .beta(o.number("beta", 0.75))
                                                               .k(o.number("k", 1.0)));
  });
}

// nn.Embedding(n, dim[, {padding_idx}]): indices 1..n, padding_idx 1-based.
int l_embedding(lua_State* L) {
  return guarded(L, [&] {
    const int64_t n = check_integer(L, 1, "nn.Embedding"), d = check_integer(L, 2, "nn.Embedding");
    Options o(L, 3, "nn.Embedding", {"padding_idx"});
    torch::nn::EmbeddingOptions opts(n, d);
    if (o.has("padding_idx")) opts.padding_idx(o.integer("padding_idx", 1) - 1);
    return push_layer<nn::OneBasedEmbeddingImpl>(L, opts);
  });
}

// nn.EmbeddingBag(n, dim[, {mode = 'mean'}]): forward(indices[, offsets][, per_sample_weights]).
int l_embedding_bag(lua_State* L) {
  return guarded(L, [&] {
    const int64_t n = check_integer(L, 1, "nn.EmbeddingBag");
    const int64_t d = check_integer(L, 2, "nn.EmbeddingBag");
    Options o(L, 3, "nn.EmbeddingBag", {"mode"});
    const std::string mode = o.string("mode", "mean");
    torch::nn::EmbeddingBagOptions opts(n, d);
    if (mode == "sum")
      opts.mode(torch::kSum);
    else if (mode == "mean")
      opts.mode(torch::kMean);
    else if (mode == "max")
      opts.mode(torch::kMax);
    else
      throw ArgumentError("nn.EmbeddingBag: mode must be sum, mean or max, got '" + mode + "'");
    return push_layer<nn::OneBasedEmbeddingBagImpl>(L, opts);
  });
}

int l_group_norm(lua_State* L) {
  return guarded(L, [&] {
    const int64_t groups = check_integer(L, 1, "nn.GroupNorm");
    const int64_t channels = check_integer(L, 2, "nn.GroupNorm");
    Options o(L, 3, "nn.GroupNorm", {"eps", "affine"});
    return push_layer<torch::nn::GroupNormImpl>(L, torch::nn::GroupNormOptions(groups, channels)
                                                       .eps(o.number("eps", 1e-5))
                                                       .affine(o.boolean("affine", true)));
  });
}

int l_bilinear(lua_State* L) {
  return guarded(L, [&] {
    const int64_t in1 = check_integer(L, 1, "nn.Bilinear"),
                  in2 = check_integer(L, 2, "nn.Bilinear");
    const int64_t out = check_integer(L, 3, "nn.Bilinear");
    Options o(L, 4, "nn.Bilinear", {"bias"});
    return push_layer<torch::nn::BilinearImpl>(
        L, torch::nn::BilinearOptions(in1, in2, out).bias(o.boolean("bias", true)));
  });
}

// nn.LSTM / nn.GRU(input_size, hidden_size[, {num_layers, bias, batch_first, dropout,
// bidirectional}])
template <class Impl, class Opts>
int recurrent(lua_State* L, const char* name) {
  return guarded(L, [&] {
    const int64_t in = check_integer(L, 1, name), hidden = check_integer(L, 2, name);
    Options o(L, 3, name, {"num_layers", "bias", "batch_first", "dropout", "bidirectional"});
    return push_layer<Impl>(L, Opts(in, hidden)
                                   .num_layers(o.integer("num_layers", 1))
                                   .bias(o.boolean("bias", true))
                                   .batch_first(o.boolean("batch_first", false))
                                   .dropout(o.number("dropout", 0.0))
                                   .bidirectional(o.boolean("bidirectional", false)));
  });
}
int l_lstm(lua_State* L) {
  return recurrent<torch::nn::LSTMImpl, torch::nn::LSTMOptions>(L, "nn.LSTM");
}
int l_gru(lua_State* L) {
  return recurrent<torch::nn::GRUImpl, torch::nn::GRUOptions>(L, "nn.GRU");
}

int l_multihead_attention(lua_State* L) {
  const char* name = "nn.MultiheadAttention";
  return guarded(L, [&] {
    const int64_t dim = check_integer(L, 1, name), heads = check_integer(L, 2, name);
    Options o(L, 3, name, {"dropout", "bias", "batch_first", "kdim", "vdim"});
    if (heads <= 0 || dim % heads != 0) {
      throw ArgumentError(std::string(name) + ": embed_dim " + std::to_string(dim) +
                          " must be divisible by num_heads " + std::to_string(heads));
    }
    auto opts = torch::nn::MultiheadAttentionOptions(dim, heads)
                    .dropout(o.number("dropout", 0.0))
                    .bias(o.boolean("bias", true))
                    .kdim(o.integer("kdim", dim))
                    .vdim(o.integer("vdim", dim));
    return push_layer<nn::MultiheadAttentionImpl>(L, opts, o.boolean("batch_first", false));
  });
}

// nn.Unflatten(d, sizes): 1-based d.
int l_unflatten(lua_State* L) {
  return guarded(L, [&] {
    const int64_t dim = layer_dim(check_integer(L, 1, "nn.Unflatten"), "nn.Unflatten");
    const auto sizes = integer_list(L, 2, "nn.Unflatten: sizes");
    return push_layer<torch::nn::UnflattenImpl>(L, torch::nn::UnflattenOptions(dim, sizes));
  });
}

template <class Impl, class Opts>
int dropout(lua_State* L, const char* name) {
  return guarded(L, [&] {
    const double p = lua_isnoneornil(L, 1) ? 0.5 : check_number(L, 1, name);
    if (p < 0 || p > 1)
      throw ArgumentError(std::string(name) + ": p must be in [0, 1], got " + std::to_string(p));
    return push_layer<Impl>(L, Opts(p));
  });
}

int l_dropout(lua_State* L) {
  return dropout<torch::nn::DropoutImpl, torch::nn::DropoutOptions>(L, "nn.Dropout");
}
int l_dropout1d(lua_State* L) {
  return dropout<nn::Dropout1dImpl, torch::nn::Dropout2dOptions>(L, "nn.Dropout1d");
}
int l_dropout2d(lua_State* L) {
  return dropout<nn::Dropout2dImpl, torch::nn::Dropout2dOptions>(L, "nn.Dropout2d");
}
int l_dropout3d(lua_State* L) {
  return dropout<torch::nn::Dropout3dImpl, torch::nn::Dropout3dOptions>(L, "nn.Dropout3d");
}

// nn.Flatten(start_dim = 2, end_dim = -1): 1-based, so the default keeps the batch dimension.
int l_flatten(lua_State* L) {
  return guarded(L, [&] {
    const int64_t start = lua_isnoneornil(L, 1) ? 2 : check_integer(L, 1, "nn.Flatten");
    const int64_t end = lua_isnoneornil(L, 2) ? -1 : check_integer(L, 2, "nn.Flatten");
    return push_layer<torch::nn::FlattenImpl>(L, torch::nn::FlattenOptions()
                                                     .start_dim(layer_dim(start, "nn.Flatten"))
                                                     .end_dim(layer_dim(end, "nn.Flatten")));
  });
}

int l_relu(lua_State* L) {
  return guarded(L, [&] { return push_layer<torch::nn::ReLUImpl>(L); });
}
int l_gelu(lua_State* L) {
  return guarded(L, [&] { return push_layer<torch::nn::GELUImpl>(L); });
}
int l_silu(lua_State* L) {
  return guarded(L, [&] { return push_layer<torch::nn::SiLUImpl>(L); });
}
int l_tanh(lua_State* L) {
  return guarded(L, [&] { return push_layer<torch::nn::TanhImpl>(L); });
}
int l_sigmoid(lua_State* L) {
  return guarded(L, [&] { return push_layer<torch::nn::SigmoidImpl>(L); });
}
int l_identity(lua_State* L) {
  return guarded(L, [&] { return push_layer<torch::nn::IdentityImpl>(L); });
}

int l_leaky_relu(lua_State* L) {
  return guarded(L, [&] {
    const double slope = lua_isnoneornil(L, 1) ? 0.01 : check_number(L, 1, "nn.LeakyReLU");
    return push_layer<torch::nn::LeakyReLUImpl>(
        L, torch::nn::LeakyReLUOptions().negative_slope(slope));
  });
}

int l_softmax(lua_State* L) {
  return guarded(L, [&] {
    const int64_t dim = layer_dim(check_integer(L, 1, "nn.Softmax"), "nn.Softmax");
    return push_layer<torch::nn::SoftmaxImpl>(L, torch::nn::SoftmaxOptions(dim));
  });
}

int l_log_softmax(lua_State* L) {
  return guarded(L, [&] {
    const int64_t dim = layer_dim(check_integer(L, 1, "nn.LogSoftmax"), "nn.LogSoftmax");
    return push_layer<torch::nn::LogSoftmaxImpl>(L, torch::nn::LogSoftmaxOptions(dim));
  });
}

// nn.Sequential{m1, m2, ...} or nn.Sequential(m1, m2, ...)
int l_sequential(lua_State* L) {
  return guarded(L, [&] {
    auto seq = std::make_shared<nn::SequentialImpl>();
    auto add = [&](int index) { seq->push_back(check_module(L, index, "nn.Sequential").any); };
    if (lua_gettop(L) == 1 && lua_istable(L, 1) && !test_module(L, 1)) {
      const size_t n = lua_objlen(L, 1);
      for (size_t i = 1; i <= n; ++i) {
        lua_rawgeti(L, 1, static_cast<int>(i));
        if (!test_module(L, -1)) {
          const std::string got = type_name(L, -1);
          lua_pop(L, 1);
          throw ArgumentError("nn.Sequential: element " + std::to_string(i) + " is a " + got +
                              ", not a module");
        }
        add(lua_gettop(L));
        lua_pop(L, 1);
      }
    } else {
      for (int i = 1; i <= lua_gettop(L); ++i) add(i);
    }
    push_module(L, AnyModule(seq));
    return 1;
  });
}

const Binding kLayers[] = {{"Linear", l_linear},
                           {"Conv1d", l_conv1d},
                           {"Conv2d", l_conv2d},
                           {"Conv3d", l_conv3d},
                           {"GroupNorm", l_group_norm},
                           {"Bilinear", l_bilinear},
                           {"EmbeddingBag", l_embedding_bag},
                           {"LSTM", l_lstm},
                           {"GRU", l_gru},
                           {"MultiheadAttention", l_multihead_attention},
                           {"Unflatten", l_unflatten},
                           {"MaxPool2d", l_maxpool2d},
                           {"AvgPool2d", l_avgpool2d},
                           {"AdaptiveAvgPool2d", l_adaptive_avgpool2d},
                           {"BatchNorm1d", l_batchnorm1d},
                           {"BatchNorm2d", l_batchnorm2d},
                           {"BatchNorm3d", l_batchnorm3d},
                           {"SyncBatchNorm", l_sync_batchnorm},
                           {"LayerNorm", l_layernorm},
                           {"Embedding", l_embedding},
                           {"LocalResponseNorm", l_local_response_norm},
                           {"Dropout", l_dropout},
                           {"Dropout1d", l_dropout1d},
                           {"Dropout2d", l_dropout2d},
                           {"Dropout3d", l_dropout3d},
                           {"Flatten", l_flatten},
                           {"ReLU", l_relu},
                           {"LeakyReLU", l_leaky_relu},
                           {"GELU", l_gelu},
                           {"SiLU", l_silu},
                           {"Tanh", l_tanh},
                           {"Sigmoid", l_sigmoid},
                           {"Identity", l_identity},
                           {"Softmax", l_softmax},
                           {"LogSoftmax", l_log_softmax},
                           {"Sequential", l_sequential},
                           {nullptr, nullptr}};

}  // namespace

const Binding* layer_functions() {
  return kLayers;
}

}  // namespace engine::lua
