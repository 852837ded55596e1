// Part of require 'nn.core': activation layers beyond layers.cpp's, with PyTorch's names,
// arguments and defaults: ReLU6, ELU, SELU, CELU, Softplus, Softsign, PReLU, Hardtanh, Mish,
// LogSigmoid, Softmin, GLU, Threshold, Tanhshrink, Hardswish, Hardsigmoid.
#include <torch/nn/modules/activation.h>

#include "engine/lua/nn/nn_tables.hpp"

namespace engine::lua {
namespace {

namespace tnn = torch::nn;

// layers without arguments
template <class Impl>
int plain_activation(lua_State* L) {
  return guarded(L, [&] { return push_layer<Impl>(L); });
}

int l_relu6(lua_State* L) {
  return guarded(L, [&] { return push_layer<tnn::ReLU6Impl>(L, tnn::ReLU6Options()); });
}

int l_elu(lua_State* L) {
  return guarded(L, [&] {
    return push_layer<tnn::ELUImpl>(L, tnn::ELUOptions().alpha(number_or(L, 1, 1.0, "nn.ELU")));
  });
}

int l_celu(lua_State* L) {
  return guarded(L, [&] {
    return push_layer<tnn::CELUImpl>(L, tnn::CELUOptions().alpha(number_or(L, 1, 1.0, "nn.CELU")));
  });
}

// nn.Softplus([{beta = 1, threshold = 20}])
int l_softplus(lua_State* L) {
  return guarded(L, [&] {
    Options o(L, 1, "nn.Softplus", {"beta", "threshold"});
    return push_layer<tnn::SoftplusImpl>(
        L, tnn::SoftplusOptions().beta(o.number("beta", 1.0)).threshold(o.number("threshold", 20)));
  });
}

// nn.PReLU([{num_parameters = 1, init = 0.25}])
int l_prelu(lua_State* L) {
  return guarded(L, [&] {
    Options o(L, 1, "nn.PReLU", {"num_parameters", "init"});
    return push_layer<tnn::PReLUImpl>(L, tnn::PReLUOptions()
                                             .num_parameters(o.integer("num_parameters", 1))
                                             .init(o.number("init", 0.25)));
  });
}

// nn.Hardtanh([min_val = -1[, max_val = 1]])
int l_hardtanh(lua_State* L) {
  return guarded(L, [&] {
    return push_layer<tnn::HardtanhImpl>(L, tnn::HardtanhOptions()
                                                .min_val(number_or(L, 1, -1, "nn.Hardtanh"))
                                                .max_val(number_or(L, 2, 1, "nn.Hardtanh")));
  });
}

// nn.Softmin(d), nn.GLU([d = -1]): 1-based dimensions
int l_softmin(lua_State* L) {
  return guarded(L, [&] {
    return push_layer<tnn::SoftminImpl>(
        L, tnn::SoftminOptions(layer_dim(check_integer(L, 1, "nn.Softmin"), "nn.Softmin")));
  });
}
int l_glu(lua_State* L) {
  return guarded(L, [&] {
    const int64_t dim = lua_isnoneornil(L, 1) ? -1 : check_integer(L, 1, "nn.GLU");
    return push_layer<tnn::GLUImpl>(L, tnn::GLUOptions(layer_dim(dim, "nn.GLU")));
  });
}

// nn.Threshold(threshold, value)
int l_threshold(lua_State* L) {
  return guarded(L, [&] {
    return push_layer<tnn::ThresholdImpl>(
        L, tnn::ThresholdOptions(check_number(L, 1, "nn.Threshold"),
                                 check_number(L, 2, "nn.Threshold")));
  });
}

torch::Tensor hardswish(const torch::Tensor& x) {
  return torch::hardswish(x);
}
torch::Tensor hardsigmoid(const torch::Tensor& x) {
  return torch::hardsigmoid(x);
}
int l_hardswish(lua_State* L) {
  return guarded(L, [&] { return push_layer<nn::ElementwiseImpl>(L, "Hardswish", hardswish); });
}
int l_hardsigmoid(lua_State* L) {
  return guarded(L, [&] { return push_layer<nn::ElementwiseImpl>(L, "Hardsigmoid", hardsigmoid); });
}

const Binding kActivationLayers[] = {{"ReLU6", l_relu6},
                                     {"ELU", l_elu},
                                     {"SELU", plain_activation<tnn::SELUImpl>},
                                     {"CELU", l_celu},
                                     {"Softplus", l_softplus},
                                     {"Softsign", plain_activation<tnn::SoftsignImpl>},
                                     {"PReLU", l_prelu},
                                     {"Hardtanh", l_hardtanh},
                                     {"Mish", plain_activation<tnn::MishImpl>},
                                     {"LogSigmoid", plain_activation<tnn::LogSigmoidImpl>},
                                     {"Softmin", l_softmin},
                                     {"GLU", l_glu},
                                     {"Threshold", l_threshold},
                                     {"Tanhshrink", plain_activation<tnn::TanhshrinkImpl>},
                                     {"Hardswish", l_hardswish},
                                     {"Hardsigmoid", l_hardsigmoid},
                                     {nullptr, nullptr}};

}  // namespace

const Binding* activation_layer_functions() {
  return kActivationLayers;
}

}  // namespace engine::lua
