// nn.init: libtorch's parameter initialisers, in place on a tensor, with PyTorch's names and
// defaults. Each returns the tensor it filled.
#include <torch/nn/init.h>

#include "engine/lua/runtime/libraries.hpp"
#include "engine/lua/torch/tensor_value.hpp"

namespace engine::lua {
namespace {

namespace init = torch::nn::init;

// Runs fill on the tensor at index 1 and returns that tensor.
template <class Fill>
int fill(lua_State* L, const char* function, Fill&& fill_tensor) {
  return guarded(L, [&] {
    auto& t = check_tensor(L, 1, function);
    fill_tensor(t);
    lua_settop(L, 1);
    return 1;
  });
}

// Options shared by kaiming_*: {a = 0, mode = 'fan_in', nonlinearity = 'leaky_relu'}.
struct KaimingOptions {
  double a;
  init::FanModeType mode;
  init::NonlinearityType nonlinearity;
};

init::NonlinearityType parse_nonlinearity(const std::string& name, const char* function) {
  if (name == "linear") return torch::kLinear;
  if (name == "conv1d") return torch::kConv1D;
  if (name == "conv2d") return torch::kConv2D;
  if (name == "conv3d") return torch::kConv3D;
  if (name == "sigmoid") return torch::kSigmoid;
  if (name == "tanh") return torch::kTanh;
  if (name == "relu") return torch::kReLU;
  if (name == "leaky_relu") return torch::kLeakyReLU;
  throw ArgumentError(std::string(function) + ": unknown nonlinearity '" + name +
                      "' (linear, conv1d, conv2d, conv3d, sigmoid, tanh, relu, leaky_relu)");
}

KaimingOptions kaiming_options(lua_State* L, int index, const char* function) {
  Options o(L, index, function, {"a", "mode", "nonlinearity"});
  const std::string mode = o.string("mode", "fan_in");
  if (mode != "fan_in" && mode != "fan_out") {
    throw ArgumentError(std::string(function) + ": mode must be 'fan_in' or 'fan_out', got '" +
                        mode + "'");
  }
  return {o.number("a", 0.0),
          mode == "fan_in" ? init::FanModeType(torch::kFanIn) : init::FanModeType(torch::kFanOut),
          parse_nonlinearity(o.string("nonlinearity", "leaky_relu"), function)};
}

int i_uniform(lua_State* L) {
  return fill(L, "nn.init.uniform_", [&](torch::Tensor& t) {
    init::uniform_(t, number_or(L, 2, 0.0, "nn.init.uniform_"),
                   number_or(L, 3, 1.0, "nn.init.uniform_"));
  });
}
int i_normal(lua_State* L) {
  return fill(L, "nn.init.normal_", [&](torch::Tensor& t) {
    init::normal_(t, number_or(L, 2, 0.0, "nn.init.normal_"),
                  number_or(L, 3, 1.0, "nn.init.normal_"));
  });
}
int i_constant(lua_State* L) {
  return fill(L, "nn.init.constant_", [&](torch::Tensor& t) {
    init::constant_(t, check_number(L, 2, "nn.init.constant_"));
  });
}
int i_zeros(lua_State* L) {
  return fill(L, "nn.init.zeros_", [](torch::Tensor& t) { init::zeros_(t); });
}
int i_ones(lua_State* L) {
  return fill(L, "nn.init.ones_", [](torch::Tensor& t) { init::ones_(t); });
}
int i_eye(lua_State* L) {
  return fill(L, "nn.init.eye_", [](torch::Tensor& t) { init::eye_(t); });
}
int i_xavier_uniform(lua_State* L) {
  return fill(L, "nn.init.xavier_uniform_", [&](torch::Tensor& t) {
    init::xavier_uniform_(t, number_or(L, 2, 1.0, "nn.init.xavier_uniform_"));
  });
}
int i_xavier_normal(lua_State* L) {
  return fill(L, "nn.init.xavier_normal_", [&](torch::Tensor& t) {
    init::xavier_normal_(t, number_or(L, 2, 1.0, "nn.init.xavier_normal_"));
  });
}
int i_kaiming_uniform(lua_State* L) {
  return fill(L, "nn.init.kaiming_uniform_", [&](torch::Tensor& t) {
    const auto o = kaiming_options(L, 2, "nn.init.kaiming_uniform_");
    init::kaiming_uniform_(t, o.a, o.mode, o.nonlinearity);
  });
}
int i_kaiming_normal(lua_State* L) {
  return fill(L, "nn.init.kaiming_normal_", [&](torch::Tensor& t) {
    const auto o = kaiming_options(L, 2, "nn.init.kaiming_normal_");
    init::kaiming_normal_(t, o.a, o.mode, o.nonlinearity);
  });
}
int i_orthogonal(lua_State* L) {
  return fill(L, "nn.init.orthogonal_", [&](torch::Tensor& t) {
    init::orthogonal_(t, number_or(L, 2, 1.0, "nn.init.orthogonal_"));
  });
}
// trunc_normal_(t, mean = 0, std = 1, a = -2, b = 2): normal values redrawn outside [a, b], as
// PyTorch's (libtorch 1.13 has no C++ form): inverse-CDF sampling of the truncated normal.
int i_trunc_normal(lua_State* L) {
  return fill(L, "nn.init.trunc_normal_", [&](torch::Tensor& t) {
    const double mean = number_or(L, 2, 0.0, "nn.init.trunc_normal_");
    const double std = number_or(L, 3, 1.0, "nn.init.trunc_normal_");
    const double a = number_or(L, 4, -2.0, "nn.init.trunc_normal_");
    const double b = number_or(L, 5, 2.0, "nn.init.trunc_normal_");
    if (!(a < b)) throw ArgumentError("nn.init.trunc_normal_: a must be less than b");
    torch::NoGradGuard no_grad;
    const auto cdf = [](double x) { return 0.5 * (1.0 + std::erf(x / std::sqrt(2.0))); };
    const double lo = cdf((a - mean) / std), hi = cdf((b - mean) / std);
    t.uniform_(2 * lo - 1, 2 * hi - 1).erfinv_().mul_(std * std::sqrt(2.0)).add_(mean);
    t.clamp_(a, b);
  });
}
int i_calculate_gain(lua_State* L) {
  return guarded(L, [&] {
    const auto nl =
        parse_nonlinearity(check_string(L, 1, "nn.init.calculate_gain"), "nn.init.calculate_gain");
    lua_pushnumber(L, init::calculate_gain(nl, number_or(L, 2, 0.01, "nn.init.calculate_gain")));
    return 1;
  });
}

const Binding kInit[] = {{"uniform_", i_uniform},
                         {"normal_", i_normal},
                         {"constant_", i_constant},
                         {"zeros_", i_zeros},
                         {"ones_", i_ones},
                         {"eye_", i_eye},
                         {"xavier_uniform_", i_xavier_uniform},
                         {"xavier_normal_", i_xavier_normal},
                         {"kaiming_uniform_", i_kaiming_uniform},
                         {"kaiming_normal_", i_kaiming_normal},
                         {"orthogonal_", i_orthogonal},
                         {"trunc_normal_", i_trunc_normal},
                         {"calculate_gain", i_calculate_gain},
                         {nullptr, nullptr}};

}  // namespace

void add_init(lua_State* L, int library) {
  add_bindings_table(L, library, "init", {kInit});
}

}  // namespace engine::lua
