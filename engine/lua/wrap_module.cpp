// require 'nn.core': built-in layers (libtorch modules), nn.Sequential, module methods, losses,
// metrics, and the hooks nn.lua uses to build modules written in Lua.
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/modules/pooling.h>
#include <torch/nn/modules/rnn.h>

#include <cstring>

#include "engine/core/device.hpp"
#include "engine/core/format.hpp"
#include "engine/lua/libraries.hpp"
#include "engine/lua/lua_module.hpp"
#include "engine/lua/module_value.hpp"
#include "engine/lua/tensor_value.hpp"
#include "engine/nn/describe.hpp"
#include "engine/nn/layers.hpp"
#include "engine/nn/loss.hpp"
#include "engine/nn/sequential.hpp"
#include "engine/train/metrics.hpp"

namespace engine::lua {

void push_module(lua_State* L, const torch::nn::AnyModule& module) {
  if (auto* lua_defined = dynamic_cast<LuaModuleImpl*>(module.ptr().get())) {
    lua_defined->push_object(L);
    return;
  }
  push_new<ModuleBox>(L, ModuleBox{module});
}

ModuleBox* test_module(lua_State* L, int index) {
  if (auto* box = test<ModuleBox>(L, index)) return box;
  if (lua_istable(L, index)) {
    index = absolute_index(L, index);
    lua_pushliteral(L, "__cpp");  // a raw field set by nn.lua: no metamethod may run here
    lua_rawget(L, index);
    auto* box = test<ModuleBox>(L, -1);
    lua_pop(L, 1);
    return box;
  }
  return nullptr;
}

ModuleBox& check_module(lua_State* L, int index, const char* function) {
  if (auto* box = test_module(L, index)) return *box;
  throw ArgumentError(std::string("bad argument #") + std::to_string(index) + " to '" + function +
                      "' (module expected, got " + found_instead<ModuleBox>(L, index) + ")");
}

nn::Model model_from(const ModuleBox& box) {
  auto any = std::make_shared<torch::nn::AnyModule>(box.any);
  return nn::Model{box.module(),
                   [any](const torch::Tensor& x) { return nn::forward_layer(*any, x); }};
}

std::shared_ptr<nn::Loss> loss_from_options(lua_State* L, int index, nn::Loss::Kind kind,
                                            const char* function) {
  using Kind = nn::Loss::Kind;
  const char* parameter = kind == Kind::kCrossEntropy    ? "label_smoothing"
                          : kind == Kind::kSmoothL1      ? "beta"
                          : kind == Kind::kBceWithLogits ? "pos_weight"
                                                         : nullptr;
  Options o(L, index, function,
            parameter ? std::initializer_list<const char*>{"reduction", parameter}
                      : std::initializer_list<const char*>{"reduction"});
  const auto reduction = nn::parse_reduction(o.string("reduction", "mean"));
  if (kind == Kind::kBceWithLogits) {
    return std::make_shared<nn::Loss>(kind, reduction, -1.0,
                                      tensor_option(L, index, "pos_weight", function));
  }
  return std::make_shared<nn::Loss>(kind, reduction, parameter ? o.number(parameter, -1.0) : -1.0);
}

namespace {

using torch::nn::AnyModule;

template <class Impl, class... Args>
int push_layer(lua_State* L, Args&&... args) {
  push_module(L, AnyModule(std::make_shared<Impl>(std::forward<Args>(args)...)));
  return 1;
}

// A 1-based dimension given at construction, before the input rank is known.
int64_t layer_dim(int64_t user_dim, const char* function) {
  if (user_dim == 0) {
    throw ArgumentError(std::string(function) +
                        ": dimension 0 does not exist (dimensions are 1-based; -1 is the last)");
  }
  return user_dim > 0 ? user_dim - 1 : user_dim;
}

int l_linear(lua_State* L) {
  return guarded(L, [&] {
    const int64_t in = check_integer(L, 1, "nn.Linear"), out = check_integer(L, 2, "nn.Linear");
    Options o(L, 3, "nn.Linear", {"bias"});
    return push_layer<torch::nn::LinearImpl>(
        L, torch::nn::LinearOptions(in, out).bias(o.boolean("bias", true)));
  });
}

template <size_t D, class Impl, class Opts>
int conv(lua_State* L, const char* name) {
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
  return conv<1, torch::nn::Conv1dImpl, torch::nn::Conv1dOptions>(L, "nn.Conv1d");
}
int l_conv2d(lua_State* L) {
  return conv<2, torch::nn::Conv2dImpl, torch::nn::Conv2dOptions>(L, "nn.Conv2d");
}
int l_conv3d(lua_State* L) {
  return conv<3, torch::nn::Conv3dImpl, torch::nn::Conv3dOptions>(L, "nn.Conv3d");
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

template <class Impl, class Opts>
int batchnorm(lua_State* L, const char* name) {
  return guarded(L, [&] {
    const int64_t n = check_integer(L, 1, name);
    Options o(L, 2, name, {"eps", "momentum", "affine", "track_running_stats"});
    return push_layer<Impl>(L, Opts(n)
                                   .eps(o.number("eps", 1e-5))
                                   .momentum(o.number("momentum", 0.1))
                                   .affine(o.boolean("affine", true))
                                   .track_running_stats(o.boolean("track_running_stats", true)));
  });
}

int l_batchnorm1d(lua_State* L) {
  return batchnorm<torch::nn::BatchNorm1dImpl, torch::nn::BatchNorm1dOptions>(L, "nn.BatchNorm1d");
}
int l_batchnorm2d(lua_State* L) {
  return batchnorm<torch::nn::BatchNorm2dImpl, torch::nn::BatchNorm2dOptions>(L, "nn.BatchNorm2d");
}

int l_layernorm(lua_State* L) {
  return guarded(L, [&] {
    std::vector<int64_t> shape;
    for (double v : number_list(L, 1, "nn.LayerNorm: normalized_shape"))
      shape.push_back(static_cast<int64_t>(v));
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

int l_conv_transpose2d(lua_State* L) {
  const char* name = "nn.ConvTranspose2d";
  return guarded(L, [&] {
    const int64_t in = check_integer(L, 1, name), out = check_integer(L, 2, name);
    const auto kernel = size_list(L, 3, std::string(name) + ": kernel_size", 2);
    Options o(L, 4, name, {"stride", "padding", "output_padding", "groups", "bias", "dilation"});
    torch::nn::ConvTranspose2dOptions opts{in, out, torch::ExpandingArray<2>(kernel)};
    opts.stride(torch::ExpandingArray<2>(o.integers("stride", {1, 1}, 2)))
        .padding(torch::ExpandingArray<2>(o.integers("padding", {0, 0}, 2)))
        .output_padding(torch::ExpandingArray<2>(o.integers("output_padding", {0, 0}, 2)))
        .dilation(torch::ExpandingArray<2>(o.integers("dilation", {1, 1}, 2)))
        .groups(o.integer("groups", 1))
        .bias(o.boolean("bias", true));
    return push_layer<torch::nn::ConvTranspose2dImpl>(L, opts);
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

int l_transformer_encoder_layer(lua_State* L) {
  const char* name = "nn.TransformerEncoderLayer";
  return guarded(L, [&] {
    const int64_t dim = check_integer(L, 1, name), heads = check_integer(L, 2, name);
    Options o(L, 3, name,
              {"dim_feedforward", "dropout", "activation", "batch_first", "norm_first"});
    if (o.boolean("norm_first", false)) {
      throw ArgumentError(std::string(name) +
                          ": norm_first = true is not available in libtorch 1.13's C++ layer");
    }
    const std::string activation = o.string("activation", "relu");
    auto opts = torch::nn::TransformerEncoderLayerOptions(dim, heads)
                    .dim_feedforward(o.integer("dim_feedforward", 2048))
                    .dropout(o.number("dropout", 0.1));
    if (activation == "relu")
      opts.activation(torch::kReLU);
    else if (activation == "gelu")
      opts.activation(torch::kGELU);
    else
      throw ArgumentError(std::string(name) + ": activation must be 'relu' or 'gelu'");
    return push_layer<nn::TransformerEncoderLayerImpl>(L, opts, o.boolean("batch_first", false));
  });
}

// nn.Unflatten(d, sizes): 1-based d.
int l_unflatten(lua_State* L) {
  return guarded(L, [&] {
    const int64_t dim = layer_dim(check_integer(L, 1, "nn.Unflatten"), "nn.Unflatten");
    std::vector<int64_t> sizes;
    for (double v : number_list(L, 2, "nn.Unflatten: sizes"))
      sizes.push_back(static_cast<int64_t>(v));
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
int l_dropout2d(lua_State* L) {
  return dropout<torch::nn::Dropout2dImpl, torch::nn::Dropout2dOptions>(L, "nn.Dropout2d");
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

// ---- module methods ---------------------------------------------------------------------------

nn::SequentialImpl* as_sequential(ModuleBox& box) {
  return dynamic_cast<nn::SequentialImpl*>(box.module().get());
}

// Layers whose forward takes or returns more than one tensor; returns -1 for the others.
int forward_several(lua_State* L, torch::nn::Module* module) {
  auto optional_tensor = [&](int index) {
    return lua_isnoneornil(L, index) ? torch::Tensor() : check_tensor(L, index, "forward");
  };
  if (auto* lstm = dynamic_cast<torch::nn::LSTMImpl*>(module)) {
    // lstm(x[, {h, c}]) -> output, {h, c}
    c10::optional<std::tuple<torch::Tensor, torch::Tensor>> state;
    if (!lua_isnoneornil(L, 3)) {
      if (!lua_istable(L, 3)) {
        throw ArgumentError("bad argument #3 to 'forward' (LSTM state {h, c} expected, got " +
                            type_name(L, 3) + ")");
      }
      torch::Tensor hc[2];
      for (int i = 0; i < 2; ++i) {
        lua_rawgeti(L, 3, i + 1);
        auto* t = test_tensor(L, -1);
        if (!t) {
          const std::string got = type_name(L, -1);
          lua_pop(L, 1);
          throw ArgumentError("bad argument #3 to 'forward' (LSTM state {h, c}: element " +
                              std::to_string(i + 1) + " is " + got + ", expected a Tensor)");
        }
        hc[i] = *t;
        lua_pop(L, 1);
      }
      state = std::make_tuple(hc[0], hc[1]);
    }
    auto [out, hc] = lstm->forward(check_tensor(L, 2, "forward"), state);
    push_tensor(L, out);
    lua_createtable(L, 2, 0);
    push_tensor(L, std::get<0>(hc));
    lua_rawseti(L, -2, 1);
    push_tensor(L, std::get<1>(hc));
    lua_rawseti(L, -2, 2);
    return 2;
  }
  if (auto* gru = dynamic_cast<torch::nn::GRUImpl*>(module)) {
    auto [out, h] = gru->forward(check_tensor(L, 2, "forward"), optional_tensor(3));
    push_tensor(L, out);
    push_tensor(L, h);
    return 2;
  }
  if (auto* attention = dynamic_cast<nn::MultiheadAttentionImpl*>(module)) {
    // attn(q, k, v[, {key_padding_mask, need_weights = true, attn_mask}]) -> output, weights
    Options o(L, 5, "MultiheadAttention", {"key_padding_mask", "need_weights", "attn_mask"});
    auto [out, weights] = attention->forward(
        check_tensor(L, 2, "forward"), check_tensor(L, 3, "forward"), check_tensor(L, 4, "forward"),
        tensor_option(L, 5, "key_padding_mask", "MultiheadAttention"),
        o.boolean("need_weights", true), tensor_option(L, 5, "attn_mask", "MultiheadAttention"));
    push_tensor(L, out);
    if (weights.defined()) {
      push_tensor(L, weights);
    } else {
      lua_pushnil(L);
    }
    return 2;
  }
  if (auto* layer = dynamic_cast<nn::TransformerEncoderLayerImpl*>(module)) {
    Options o(L, 3, "TransformerEncoderLayer", {"src_mask", "src_key_padding_mask"});
    push_tensor(
        L, layer->forward(check_tensor(L, 2, "forward"),
                          tensor_option(L, 3, "src_mask", "TransformerEncoderLayer"),
                          tensor_option(L, 3, "src_key_padding_mask", "TransformerEncoderLayer")));
    return 1;
  }
  if (auto* bilinear = dynamic_cast<torch::nn::BilinearImpl*>(module)) {
    push_tensor(L, bilinear->forward(check_tensor(L, 2, "forward"), check_tensor(L, 3, "forward")));
    return 1;
  }
  if (auto* bag = dynamic_cast<nn::OneBasedEmbeddingBagImpl*>(module)) {
    push_tensor(
        L, bag->forward(check_tensor(L, 2, "forward"), optional_tensor(3), optional_tensor(4)));
    return 1;
  }
  return -1;
}

int m_forward(lua_State* L) {
  return guarded(L, [&] {
    auto& box = check_module(L, 1, "forward");
    if (box.several_tensors != 0) {
      const int n = forward_several(L, box.module().get());
      box.several_tensors = n >= 0 ? 1 : 0;
      if (n >= 0) return n;
    }
    auto& x = check_tensor(L, 2, "forward");
    push_tensor(L, nn::forward_layer(box.any, x));
    return 1;
  });
}

int m_parameters(lua_State* L) {
  return guarded(L, [&] {
    auto params = check_module(L, 1, "parameters").module()->parameters();
    lua_createtable(L, static_cast<int>(params.size()), 0);
    for (size_t i = 0; i < params.size(); ++i) {
      push_tensor(L, params[i]);
      lua_rawseti(L, -2, static_cast<int>(i + 1));
    }
    return 1;
  });
}

// Two parallel lists, names and tensors, in libtorch's (= PyTorch's) order.
template <bool Buffers>
int m_named_lists(lua_State* L) {
  return guarded(L, [&] {
    auto& box = check_module(L, 1, "named_parameters");
    auto items = Buffers ? box.module()->named_buffers() : box.module()->named_parameters();
    lua_createtable(L, static_cast<int>(items.size()), 0);
    lua_createtable(L, static_cast<int>(items.size()), 0);
    int i = 1;
    for (const auto& item : items) {
      lua_pushstring(L, item.key().c_str());
      lua_rawseti(L, -3, i);
      push_tensor(L, item.value());
      lua_rawseti(L, -2, i);
      ++i;
    }
    return 2;
  });
}

// Two parallel lists, the names and the modules of the direct children, in registration order
// (PyTorch's). Children of nn.Sequential are named "0", "1", ...; those of a module written in
// Lua are the fields they were assigned to.
int m_named_children_lists(lua_State* L) {
  return guarded(L, [&] {
    auto& box = check_module(L, 1, "named_children");
    lua_newtable(L);
    lua_newtable(L);
    const int names = lua_gettop(L) - 1, values = names + 1;
    if (auto* seq = as_sequential(box)) {
      for (size_t i = 0; i < seq->size(); ++i) {
        lua_pushstring(L, std::to_string(i).c_str());
        lua_rawseti(L, names, static_cast<int>(i + 1));
        push_module(L, seq->at(i));
        lua_rawseti(L, values, static_cast<int>(i + 1));
      }
    } else if (auto* lua_defined = dynamic_cast<LuaModuleImpl*>(box.module().get())) {
      int i = 1;
      for (const auto& child : lua_defined->named_children()) {
        lua_defined->push_object(L);
        lua_pushliteral(L, "__fields");
        lua_rawget(L, -2);
        lua_pushstring(L, child.key().c_str());
        lua_rawget(L, -2);  // the field holding the child
        if (!lua_isnil(L, -1)) {
          lua_rawseti(L, values, i);
          lua_pushstring(L, child.key().c_str());
          lua_rawseti(L, names, i);
          ++i;
          lua_pop(L, 2);
        } else {
          lua_pop(L, 3);
        }
      }
    }
    return 2;
  });
}

int m_state_dict(lua_State* L) {
  return guarded(L, [&] {
    auto module = check_module(L, 1, "state_dict").module();
    lua_newtable(L);
    for (const auto& p : module->named_parameters()) {
      push_tensor(L, p.value().detach());
      lua_setfield(L, -2, p.key().c_str());
    }
    for (const auto& b : module->named_buffers()) {
      push_tensor(L, b.value());
      lua_setfield(L, -2, b.key().c_str());
    }
    return 1;
  });
}

int m_load_state_dict(lua_State* L) {
  return guarded(L, [&] {
    auto module = check_module(L, 1, "load_state_dict").module();
    if (!lua_istable(L, 2))
      throw ArgumentError("load_state_dict: expected a table of name = tensor");
    Options o(L, 3, "load_state_dict", {"strict"});
    const bool strict = o.boolean("strict", true);
    std::map<std::string, torch::Tensor> own;
    for (const auto& p : module->named_parameters()) own[p.key()] = p.value();
    for (const auto& b : module->named_buffers()) own[b.key()] = b.value();
    std::map<std::string, torch::Tensor> given;
    lua_pushnil(L);
    while (lua_next(L, 2) != 0) {
      auto* t = test_tensor(L, -1);
      if (lua_type(L, -2) == LUA_TSTRING && t) given[lua_tostring(L, -2)] = *t;
      lua_pop(L, 1);
    }
    std::vector<std::string> missing, unexpected, mismatched;
    for (const auto& [name, t] : own) {
      auto it = given.find(name);
      if (it == given.end())
        missing.push_back(name);
      else if (!it->second.sizes().equals(t.sizes())) {
        mismatched.push_back(name + " (checkpoint " + core::shape_string(it->second.sizes()) +
                             ", model " + core::shape_string(t.sizes()) + ")");
      }
    }
    for (const auto& [name, t] : given) {
      if (!own.count(name)) unexpected.push_back(name);
    }
    if (!mismatched.empty() || (strict && (!missing.empty() || !unexpected.empty()))) {
      std::string msg = "load_state_dict: the state does not match the model";
      if (!missing.empty()) msg += "\n  missing keys: " + core::join(missing);
      if (!unexpected.empty()) msg += "\n  unexpected keys: " + core::join(unexpected);
      if (!mismatched.empty()) msg += "\n  shape differences: " + core::join(mismatched);
      throw ArgumentError(msg);
    }
    torch::NoGradGuard no_grad;
    for (auto& [name, t] : own) {
      auto it = given.find(name);
      if (it != given.end()) t.copy_(it->second);
    }
    return 0;
  });
}

int m_train(lua_State* L) {
  return guarded(L, [&] {
    const bool on = lua_isnoneornil(L, 2) ? true : lua_toboolean(L, 2) != 0;
    check_module(L, 1, "train").module()->train(on);
    lua_settop(L, 1);
    return 1;
  });
}

int m_eval(lua_State* L) {
  return guarded(L, [&] {
    check_module(L, 1, "eval").module()->eval();
    lua_settop(L, 1);
    return 1;
  });
}

int m_is_training(lua_State* L) {
  return guarded(L, [&] {
    lua_pushboolean(L, check_module(L, 1, "is_training").module()->is_training());
    return 1;
  });
}

int m_to(lua_State* L) {
  return guarded(L, [&] {
    auto module = check_module(L, 1, "to").module();
    if (lua_type(L, 2) == LUA_TSTRING) {
      const std::string what = lua_tostring(L, 2);
      if (what == "cpu" || what.rfind("cuda", 0) == 0)
        module->to(core::parse_device(what));
      else
        module->to(core::parse_dtype(what));
    } else {
      Options o(L, 2, "to", {"dtype", "device"});
      if (o.has("device")) module->to(core::parse_device(o.string("device", "cpu")));
      if (o.has("dtype")) module->to(core::parse_dtype(o.string("dtype", "float32")));
    }
    lua_settop(L, 1);
    return 1;
  });
}

// m:zero_grad([set_to_none]): gradients released (nil) unless set_to_none is false, as
// opt:zero_grad and PyTorch 2.
int m_zero_grad(lua_State* L) {
  return guarded(L, [&] {
    auto module = check_module(L, 1, "zero_grad").module();
    if (!lua_isnoneornil(L, 2) && !lua_isboolean(L, 2)) {
      throw ArgumentError("m:zero_grad: set_to_none must be a boolean, got " +
                          std::string(luaL_typename(L, 2)));
    }
    module->zero_grad(lua_isnoneornil(L, 2) || lua_toboolean(L, 2));
    return 0;
  });
}

int m_num_parameters(lua_State* L) {
  return guarded(L, [&] {
    lua_pushnumber(L, static_cast<double>(
                          nn::count_parameters(*check_module(L, 1, "num_parameters").module())));
    return 1;
  });
}

int m_tostring(lua_State* L) {
  return guarded(L, [&] {
    const std::string s = nn::describe_tree(*check_module(L, 1, "tostring").module());
    lua_pushlstring(L, s.data(), s.size());
    return 1;
  });
}

int m_add(lua_State* L) {
  return guarded(L, [&] {
    auto& box = check_module(L, 1, "add");
    auto* seq = as_sequential(box);
    if (!seq) throw ArgumentError("add: only nn.Sequential has add()");
    seq->push_back(check_module(L, 2, "add").any);
    lua_settop(L, 1);
    return 1;
  });
}

int m_len(lua_State* L) {
  return guarded(L, [&] {
    auto& box = check_module(L, 1, "#");
    auto* seq = as_sequential(box);
    lua_pushnumber(L, seq ? static_cast<double>(seq->size()) : 0);
    return 1;
  });
}

// net[i] (1-based child of a Sequential), then methods.
int module_index(lua_State* L) {
  if (lua_type(L, 2) == LUA_TNUMBER) {
    return guarded(L, [&] {
      auto& box = check_module(L, 1, "index");
      auto* seq = as_sequential(box);
      if (!seq) throw ArgumentError("only nn.Sequential can be indexed by position");
      const int64_t i = check_integer(L, 2, "index");
      const int64_t n = static_cast<int64_t>(seq->size());
      if (i < 1 || i > n) {
        throw ArgumentError("nn.Sequential index " + std::to_string(i) + " is out of range 1.." +
                            std::to_string(n));
      }
      push_module(L, seq->at(static_cast<size_t>(i - 1)));
      return 1;
    });
  }
  lua_pushvalue(L, 2);
  lua_rawget(L, lua_upvalueindex(1));
  if (lua_isnil(L, -1) && lua_type(L, 2) == LUA_TSTRING &&
      std::strcmp(lua_tostring(L, 2), "training") == 0) {
    return guarded(L, [&] {
      lua_pushboolean(L, check_module(L, 1, "training").module()->is_training());
      return 1;
    });
  }
  return 1;
}

// net(x): __call passes (net, x), exactly forward's arguments.
int module_call(lua_State* L) {
  return m_forward(L);
}

// ---- modules defined in Lua (called by nn.lua) -------------------------------------------------

// core.new_lua_module(class_name, object) -> userdata wrapping a LuaModule bound to object.
int c_new_lua_module(lua_State* L) {
  return guarded(L, [&] {
    const std::string name = check_string(L, 1, "nn.Module:new");
    if (!lua_istable(L, 2)) throw ArgumentError("nn.Module:new: the object must be a table");
    lua_pushvalue(L, 2);
    const int ref = luaL_ref(L, LUA_REGISTRYINDEX);
    push_new<ModuleBox>(L, ModuleBox{AnyModule(std::make_shared<LuaModuleImpl>(L, ref, name))});
    return 1;
  });
}

LuaModuleImpl& lua_module_of(lua_State* L, int index, const char* function) {
  auto& box = check_module(L, index, function);
  auto* m = dynamic_cast<LuaModuleImpl*>(box.module().get());
  if (!m) throw ArgumentError(std::string(function) + ": not a module defined in Lua");
  return *m;
}

// core.register(owner, name, value) -> 'module' | 'parameter' | nil (a plain field)
int c_register(lua_State* L) {
  return guarded(L, [&] {
    auto& owner = lua_module_of(L, 1, "register");
    const std::string name = check_string(L, 2, "register");
    if (auto* child = test_module(L, 3)) {
      if (owner.named_children().contains(name)) {
        owner.replace_module(name, child->module());
      } else {
        owner.register_module(name, child->module());
      }
      lua_pushstring(L, "module");
      return 1;
    }
    lua_pushnil(L);
    return 1;
  });
}

int c_is_module(lua_State* L) {
  lua_pushboolean(L, test_module(L, 1) != nullptr);
  return 1;
}

int c_register_parameter(lua_State* L) {
  return guarded(L, [&] {
    auto& owner = lua_module_of(L, 1, "register_parameter");
    const std::string name = check_string(L, 2, "register_parameter");
    auto& t = check_tensor(L, 3, "register_parameter");
    auto& registered = owner.register_parameter(name, t, t.requires_grad());
    push_tensor(L, registered);
    return 1;
  });
}

int c_register_buffer(lua_State* L) {
  return guarded(L, [&] {
    auto& owner = lua_module_of(L, 1, "register_buffer");
    const std::string name = check_string(L, 2, "register_buffer");
    auto& registered = owner.register_buffer(name, check_tensor(L, 3, "register_buffer"));
    push_tensor(L, registered);
    return 1;
  });
}

// ---- losses and metrics -------------------------------------------------------------------------

template <nn::Loss::Kind Kind>
int l_loss(lua_State* L) {
  const std::string full_name = "nn." + nn::Loss(Kind).name();
  const char* name = full_name.c_str();
  return guarded(L, [&] {
    push_new<LossBox>(L, LossBox{loss_from_options(L, 1, Kind, name)});
    return 1;
  });
}

int loss_call(lua_State* L) {
  return guarded(L, [&] {
    auto& box = check<LossBox>(L, 1, "loss");
    auto& output = check_tensor(L, 2, "loss");
    auto& target = check_tensor(L, 3, "loss");
    push_tensor(L, (*box.loss)(output, box.loss->takes_class_targets() ? zero_based_targets(target)
                                                                       : target));
    return 1;
  });
}

int loss_tostring(lua_State* L) {
  return guarded(L, [&] {
    const std::string name = check<LossBox>(L, 1, "tostring").loss->name() + "()";
    lua_pushstring(L, name.c_str());
    return 1;
  });
}

int metric_accuracy(lua_State* L) {
  return guarded(L, [&] {
    auto& output = check_tensor(L, 1, "nn.metrics.accuracy");
    auto& target = check_tensor(L, 2, "nn.metrics.accuracy");
    lua_pushnumber(L, train::accuracy(output.detach(), zero_based_targets(target)));
    return 1;
  });
}

int metric_topk(lua_State* L) {
  return guarded(L, [&] {
    auto& output = check_tensor(L, 1, "nn.metrics.topk");
    auto& target = check_tensor(L, 2, "nn.metrics.topk");
    const int64_t k = check_integer(L, 3, "nn.metrics.topk");
    lua_pushnumber(L, train::topk_accuracy(output.detach(), zero_based_targets(target), k));
    return 1;
  });
}

const luaL_Reg kModuleMethods[] = {{"forward", m_forward},
                                   {"parameters", m_parameters},
                                   {"named_parameter_lists", m_named_lists<false>},
                                   {"named_buffer_lists", m_named_lists<true>},
                                   {"named_children_lists", m_named_children_lists},
                                   {"state_dict", m_state_dict},
                                   {"load_state_dict", m_load_state_dict},
                                   {"train", m_train},
                                   {"eval", m_eval},
                                   {"is_training", m_is_training},
                                   {"to", m_to},
                                   {"zero_grad", m_zero_grad},
                                   {"num_parameters", m_num_parameters},
                                   {"add", m_add},
                                   {nullptr, nullptr}};

const luaL_Reg kModuleMeta[] = {
    {"__call", module_call}, {"__tostring", m_tostring}, {"__len", m_len}, {nullptr, nullptr}};

const luaL_Reg kFunctions[] = {{"Linear", l_linear},
                               {"Conv1d", l_conv1d},
                               {"Conv2d", l_conv2d},
                               {"Conv3d", l_conv3d},
                               {"ConvTranspose2d", l_conv_transpose2d},
                               {"GroupNorm", l_group_norm},
                               {"Bilinear", l_bilinear},
                               {"EmbeddingBag", l_embedding_bag},
                               {"LSTM", l_lstm},
                               {"GRU", l_gru},
                               {"MultiheadAttention", l_multihead_attention},
                               {"TransformerEncoderLayer", l_transformer_encoder_layer},
                               {"Unflatten", l_unflatten},
                               {"MaxPool2d", l_maxpool2d},
                               {"AvgPool2d", l_avgpool2d},
                               {"AdaptiveAvgPool2d", l_adaptive_avgpool2d},
                               {"BatchNorm1d", l_batchnorm1d},
                               {"BatchNorm2d", l_batchnorm2d},
                               {"LayerNorm", l_layernorm},
                               {"Embedding", l_embedding},
                               {"LocalResponseNorm", l_local_response_norm},
                               {"Dropout", l_dropout},
                               {"Dropout2d", l_dropout2d},
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
                               {"NLLLoss", l_loss<nn::Loss::Kind::kNll>},
                               {"CrossEntropyLoss", l_loss<nn::Loss::Kind::kCrossEntropy>},
                               {"MSELoss", l_loss<nn::Loss::Kind::kMse>},
                               {"L1Loss", l_loss<nn::Loss::Kind::kL1>},
                               {"SmoothL1Loss", l_loss<nn::Loss::Kind::kSmoothL1>},
                               {"BCEWithLogitsLoss", l_loss<nn::Loss::Kind::kBceWithLogits>},
                               {"new_lua_module", c_new_lua_module},
                               {"register", c_register},
                               {"is_module", c_is_module},
                               {"register_parameter", c_register_parameter},
                               {"register_buffer", c_register_buffer},
                               {nullptr, nullptr}};

}  // namespace

int open_nn_core(lua_State* L) {
  require_library(L, "torch");
  define_type(L, ModuleBox::kTypeName, kModuleMethods, kModuleMeta, gc_userdata<ModuleBox>,
              module_index);
  push_metatable(L, ModuleBox::kTypeName);
  static const luaL_Reg loss_meta[] = {
      {"__call", loss_call}, {"__tostring", loss_tostring}, {nullptr, nullptr}};
  define_type(L, LossBox::kTypeName, nullptr, loss_meta, gc_userdata<LossBox>);

  lua_newtable(L);
  luaL_setfuncs(L, kFunctions, 0);
  lua_getfield(L, -2, "__methods");
  lua_setfield(L, -2, "module_methods");  // nn.lua adds Lua-written methods to built-ins
  push_functional(L);
  lua_setfield(L, -2, "F");
  push_init(L);
  lua_setfield(L, -2, "init");
  lua_newtable(L);
  lua_pushcfunction(L, metric_accuracy);
  lua_setfield(L, -2, "accuracy");
  lua_pushcfunction(L, metric_topk);
  lua_setfield(L, -2, "topk");
  lua_setfield(L, -2, "metrics");
  lua_remove(L, -2);  // the Module metatable
  return 1;
}

}  // namespace engine::lua
