// nn.F: the functional forms of layers and losses (torch.nn.functional), 1-based like the rest
// of the Lua API: dims, class targets and embedding indices count from 1.
#include <torch/nn/functional.h>

#include "engine/core/format.hpp"
#include "engine/lua/nn/module_value.hpp"
#include "engine/lua/runtime/libraries.hpp"
#include "engine/lua/torch/tensor_value.hpp"
#include "engine/nn/loss.hpp"

namespace engine::lua {

const Binding* functional_activations();  // functional_activations.cpp

namespace {

namespace F = torch::nn::functional;
using torch::Tensor;

int push(lua_State* L, Tensor t) {
  push_tensor(L, std::move(t));
  return 1;
}

#define UNARY(NAME, EXPR)                          \
  int f_##NAME(lua_State* L) {                     \
    return guarded(L, [&] {                        \
      auto& x = check_tensor(L, 1, "nn.F." #NAME); \
      return push(L, EXPR);                        \
    });                                            \
  }

UNARY(relu, torch::relu(x))
UNARY(gelu, torch::gelu(x))
UNARY(silu, torch::silu(x))
UNARY(sigmoid, torch::sigmoid(x))
UNARY(tanh, torch::tanh(x))

int f_softmax(lua_State* L) {
  return guarded(L, [&] {
    auto& x = check_tensor(L, 1, "nn.F.softmax");
    return push(L, torch::softmax(x, check_dim(L, 2, x.dim(), "nn.F.softmax")));
  });
}

int f_log_softmax(lua_State* L) {
  return guarded(L, [&] {
    auto& x = check_tensor(L, 1, "nn.F.log_softmax");
    return push(L, torch::log_softmax(x, check_dim(L, 2, x.dim(), "nn.F.log_softmax")));
  });
}

int f_dropout(lua_State* L) {
  return guarded(L, [&] {
    auto& x = check_tensor(L, 1, "nn.F.dropout");
    Options o(L, 2, "nn.F.dropout", {"p", "training"});
    const double p = o.number("p", 0.5);
    if (p < 0 || p > 1) throw ArgumentError("nn.F.dropout: p must be in [0, 1]");
    return push(L, torch::dropout(x, p, o.boolean("training", true)));
  });
}

int f_linear(lua_State* L) {
  return guarded(L, [&] {
    auto& x = check_tensor(L, 1, "nn.F.linear");
    auto& w = check_tensor(L, 2, "nn.F.linear");
    Tensor b = lua_isnoneornil(L, 3) ? Tensor() : check_tensor(L, 3, "nn.F.linear");
    return push(L, torch::linear(x, w, b));
  });
}

// conv1d / conv2d (x, weight[, bias][, {stride, padding, dilation, groups}])
template <size_t D>
int f_conv(lua_State* L, const char* name) {
  return guarded(L, [&] {
    auto& x = check_tensor(L, 1, name);
    auto& w = check_tensor(L, 2, name);
    const bool has_bias = test_tensor(L, 3) != nullptr;
    Tensor b = has_bias ? *test_tensor(L, 3) : Tensor();
    Options o(L, has_bias ? 4 : 3, name, {"stride", "padding", "dilation", "groups"});
    auto stride = o.integers("stride", std::vector<int64_t>(D, 1), D);
    auto padding = o.integers("padding", std::vector<int64_t>(D, 0), D);
    auto dilation = o.integers("dilation", std::vector<int64_t>(D, 1), D);
    const int64_t groups = o.integer("groups", 1);
    return push(L, D == 1 ? torch::conv1d(x, w, b, stride, padding, dilation, groups)
                          : torch::conv2d(x, w, b, stride, padding, dilation, groups));
  });
}

int f_conv1d(lua_State* L) {
  return f_conv<1>(L, "nn.F.conv1d");
}
int f_conv2d(lua_State* L) {
  return f_conv<2>(L, "nn.F.conv2d");
}

int f_max_pool2d(lua_State* L) {
  return guarded(L, [&] {
    auto& x = check_tensor(L, 1, "nn.F.max_pool2d");
    auto k = size_list(L, 2, "nn.F.max_pool2d: kernel_size", 2);
    Options o(L, 3, "nn.F.max_pool2d", {"stride", "padding", "dilation", "ceil_mode"});
    return push(
        L, torch::max_pool2d(x, k, o.integers("stride", k, 2), o.integers("padding", {0, 0}, 2),
                             o.integers("dilation", {1, 1}, 2), o.boolean("ceil_mode", false)));
  });
}

int f_avg_pool2d(lua_State* L) {
  return guarded(L, [&] {
    auto& x = check_tensor(L, 1, "nn.F.avg_pool2d");
    auto k = size_list(L, 2, "nn.F.avg_pool2d: kernel_size", 2);
    Options o(L, 3, "nn.F.avg_pool2d", {"stride", "padding", "ceil_mode", "count_include_pad"});
    return push(
        L, torch::avg_pool2d(x, k, o.integers("stride", k, 2), o.integers("padding", {0, 0}, 2),
                             o.boolean("ceil_mode", false), o.boolean("count_include_pad", true)));
  });
}

// batch_norm(x, running_mean, running_var[, {weight, bias, training, momentum, eps}])
int f_batch_norm(lua_State* L) {
  return guarded(L, [&] {
    auto& x = check_tensor(L, 1, "nn.F.batch_norm");
    Tensor mean = lua_isnoneornil(L, 2) ? Tensor() : check_tensor(L, 2, "nn.F.batch_norm");
    Tensor var = lua_isnoneornil(L, 3) ? Tensor() : check_tensor(L, 3, "nn.F.batch_norm");
    Options o(L, 4, "nn.F.batch_norm", {"weight", "bias", "training", "momentum", "eps"});
    auto weight = tensor_option(L, 4, "weight", "nn.F.batch_norm");
    auto bias = tensor_option(L, 4, "bias", "nn.F.batch_norm");
    return push(L, torch::batch_norm(x, weight, bias, mean, var, o.boolean("training", false),
                                     o.number("momentum", 0.1), o.number("eps", 1e-5), false));
  });
}

// layer_norm(x, normalized_shape[, {weight, bias, eps}])
int f_layer_norm(lua_State* L) {
  return guarded(L, [&] {
    auto& x = check_tensor(L, 1, "nn.F.layer_norm");
    auto shape = read_shape(L, 2, "nn.F.layer_norm", nullptr);
    Options o(L, 3, "nn.F.layer_norm", {"weight", "bias", "eps"});
    auto weight = tensor_option(L, 3, "weight", "nn.F.layer_norm");
    auto bias = tensor_option(L, 3, "bias", "nn.F.layer_norm");
    return push(L, torch::layer_norm(x, shape, weight, bias, o.number("eps", 1e-5)));
  });
}

// embedding(indices, weight): indices are 1-based rows of weight.
int f_embedding(lua_State* L) {
  return guarded(L, [&] {
    auto& indices = check_tensor(L, 1, "nn.F.embedding");
    auto& weight = check_tensor(L, 2, "nn.F.embedding");
    if (weight.dim() != 2)
      throw ArgumentError("nn.F.embedding: weight must be a 2-D table of rows");
    return push(
        L, torch::embedding(weight, nn::zero_based(indices, weight.size(0), "nn.F.embedding")));
  });
}

// Every loss function goes through nn::Loss, as the loss modules and the trainer do.
template <nn::Loss::Kind Kind>
int loss_function(lua_State* L, const char* name) {
  return guarded(L, [&] {
    auto& out = check_tensor(L, 1, name);
    auto& target = check_tensor(L, 2, name);
    auto loss = loss_from_options(L, 3, Kind, name);
    return push(L, loss->of_script_targets(out, target));
  });
}

int f_nll_loss(lua_State* L) {
  return loss_function<nn::Loss::Kind::kNll>(L, "nn.F.nll_loss");
}
int f_cross_entropy(lua_State* L) {
  return loss_function<nn::Loss::Kind::kCrossEntropy>(L, "nn.F.cross_entropy");
}
int f_mse_loss(lua_State* L) {
  return loss_function<nn::Loss::Kind::kMse>(L, "nn.F.mse_loss");
}
int f_l1_loss(lua_State* L) {
  return loss_function<nn::Loss::Kind::kL1>(L, "nn.F.l1_loss");
}
int f_smooth_l1_loss(lua_State* L) {
  return loss_function<nn::Loss::Kind::kSmoothL1>(L, "nn.F.smooth_l1_loss");
}
int f_binary_cross_entropy(lua_State* L) {
  return loss_function<nn::Loss::Kind::kBce>(L, "nn.F.binary_cross_entropy");
}
int f_kl_div(lua_State* L) {
  return loss_function<nn::Loss::Kind::kKlDiv>(L, "nn.F.kl_div");
}
int f_huber_loss(lua_State* L) {
  return loss_function<nn::Loss::Kind::kHuber>(L, "nn.F.huber_loss");
}
int f_bce_with_logits(lua_State* L) {
  return loss_function<nn::Loss::Kind::kBceWithLogits>(L, "nn.F.binary_cross_entropy_with_logits");
}

// pad(x, {left, right, top, bottom, ...}[, {mode = 'constant', value = 0}]), PyTorch's order.
int f_pad(lua_State* L) {
  return guarded(L, [&] {
    auto& x = check_tensor(L, 1, "nn.F.pad");
    const auto pads = integer_list(L, 2, "nn.F.pad: pad");
    Options o(L, 3, "nn.F.pad", {"mode", "value"});
    const std::string mode = o.string("mode", "constant");
    F::PadFuncOptions opts(pads);
    if (mode == "constant")
      opts.mode(torch::kConstant).value(o.number("value", 0));
    else if (mode == "reflect")
      opts.mode(torch::kReflect);
    else if (mode == "replicate")
      opts.mode(torch::kReplicate);
    else if (mode == "circular")
      opts.mode(torch::kCircular);
    else
      throw ArgumentError("nn.F.pad: mode must be constant, reflect, replicate or circular");
    return push(L, F::pad(x, opts));
  });
}

// interpolate(x, {size = {h, w} | scale_factor = s, mode = 'nearest', align_corners})
int f_interpolate(lua_State* L) {
  return guarded(L, [&] {
    auto& x = check_tensor(L, 1, "nn.F.interpolate");
    Options o(L, 2, "nn.F.interpolate", {"size", "scale_factor", "mode", "align_corners"});
    F::InterpolateFuncOptions opts;
    const size_t spatial = static_cast<size_t>(std::max<int64_t>(x.dim() - 2, 1));
    if (o.has("size")) opts.size(o.integers("size", {}, spatial));
    if (o.has("scale_factor")) {
      auto factors = o.numbers("scale_factor", {});
      if (factors.size() == 1) factors.assign(spatial, factors[0]);
      opts.scale_factor(factors);
    }
    if (!o.has("size") && !o.has("scale_factor"))
      throw ArgumentError("nn.F.interpolate: give size or scale_factor");
    const std::string mode = o.string("mode", "nearest");
    if (mode == "nearest")
      opts.mode(torch::kNearest);
    else if (mode == "linear")
      opts.mode(torch::kLinear);
    else if (mode == "bilinear")
      opts.mode(torch::kBilinear);
    else if (mode == "bicubic")
      opts.mode(torch::kBicubic);
    else
      throw ArgumentError("nn.F.interpolate: mode must be nearest, linear, bilinear or bicubic");
    if (o.has("align_corners")) opts.align_corners(o.boolean("align_corners", false));
    return push(L, F::interpolate(x, opts));
  });
}

const Binding kFunctionalFunctions[] = {{"relu", f_relu},
                                        {"gelu", f_gelu},
                                        {"silu", f_silu},
                                        {"sigmoid", f_sigmoid},
                                        {"tanh", f_tanh},
                                        {"softmax", f_softmax},
                                        {"log_softmax", f_log_softmax},
                                        {"dropout", f_dropout},
                                        {"linear", f_linear},
                                        {"conv1d", f_conv1d},
                                        {"conv2d", f_conv2d},
                                        {"max_pool2d", f_max_pool2d},
                                        {"avg_pool2d", f_avg_pool2d},
                                        {"batch_norm", f_batch_norm},
                                        {"layer_norm", f_layer_norm},
                                        {"embedding", f_embedding},
                                        {"nll_loss", f_nll_loss},
                                        {"cross_entropy", f_cross_entropy},
                                        {"mse_loss", f_mse_loss},
                                        {"l1_loss", f_l1_loss},
                                        {"smooth_l1_loss", f_smooth_l1_loss},
                                        {"binary_cross_entropy_with_logits", f_bce_with_logits},
                                        {"binary_cross_entropy", f_binary_cross_entropy},
                                        {"kl_div", f_kl_div},
                                        {"huber_loss", f_huber_loss},
                                        {"pad", f_pad},
                                        {"interpolate", f_interpolate},
                                        {nullptr, nullptr}};

}  // namespace

void add_functional(lua_State* L, int library) {
  add_bindings_table(L, library, "F", {kFunctionalFunctions, functional_activations()});
}

}  // namespace engine::lua
