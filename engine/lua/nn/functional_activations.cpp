// Part of nn.F: activations beyond functional.cpp's, and the functions of the layers that change
// sizes (adaptive pools, pixel shuffle), normalize, one_hot and cosine_similarity, with PyTorch's
// arguments; dimensions are 1-based.
#include <torch/nn/functional.h>

#include "engine/lua/nn/module_value.hpp"
#include "engine/lua/torch/tensor_value.hpp"

namespace engine::lua {
namespace {

using torch::Tensor;

int push_activation(lua_State* L, Tensor t) {
  push_tensor(L, std::move(t));
  return 1;
}

#define ACTIVATION(NAME, EXPR)                     \
  int fa_##NAME(lua_State* L) {                    \
    return guarded(L, [&] {                        \
      auto& x = check_tensor(L, 1, "nn.F." #NAME); \
      return push_activation(L, EXPR);             \
    });                                            \
  }

ACTIVATION(relu6, torch::hardtanh(x, 0, 6))
ACTIVATION(selu, torch::selu(x))
ACTIVATION(hardswish, torch::hardswish(x))
ACTIVATION(hardsigmoid, torch::hardsigmoid(x))
ACTIVATION(mish, torch::mish(x))
ACTIVATION(logsigmoid, torch::log_sigmoid(x))
ACTIVATION(softsign, x / (x.abs() + 1))
ACTIVATION(elu, torch::elu(x, number_or(L, 2, 1.0, "nn.F.elu")))
ACTIVATION(celu, torch::celu(x, number_or(L, 2, 1.0, "nn.F.celu")))
ACTIVATION(leaky_relu, torch::leaky_relu(x, number_or(L, 2, 0.01, "nn.F.leaky_relu")))
ACTIVATION(hardtanh, torch::hardtanh(x, number_or(L, 2, -1.0, "nn.F.hardtanh"),
                                     number_or(L, 3, 1.0, "nn.F.hardtanh")))

// softplus(x[, {beta = 1, threshold = 20}])
int fa_softplus(lua_State* L) {
  return guarded(L, [&] {
    auto& x = check_tensor(L, 1, "nn.F.softplus");
    Options o(L, 2, "nn.F.softplus", {"beta", "threshold"});
    return push_activation(L, torch::softplus(x, o.number("beta", 1), o.number("threshold", 20)));
  });
}

// glu(x[, dim = -1])
int fa_glu(lua_State* L) {
  return guarded(L, [&] {
    auto& x = check_tensor(L, 1, "nn.F.glu");
    const int64_t dim = lua_isnoneornil(L, 2) ? -1 : check_dim(L, 2, x.dim(), "nn.F.glu");
    return push_activation(L, torch::glu(x, dim));
  });
}

// normalize(x[, {p = 2, dim = 2, eps = 1e-12}]): PyTorch's dim=1 is Lua's 2
int fa_normalize(lua_State* L) {
  return guarded(L, [&] {
    auto& x = check_tensor(L, 1, "nn.F.normalize");
    Options o(L, 2, "nn.F.normalize", {"p", "dim", "eps"});
    const int64_t dim = to_dim(o.integer("dim", 2), x.dim(), "nn.F.normalize");
    return push_activation(
        L, torch::nn::functional::normalize(x, torch::nn::functional::NormalizeFuncOptions()
                                                   .p(o.number("p", 2))
                                                   .dim(dim)
                                                   .eps(o.number("eps", 1e-12))));
  });
}

int fa_adaptive_avg_pool2d(lua_State* L) {
  return guarded(L, [&] {
    auto& x = check_tensor(L, 1, "nn.F.adaptive_avg_pool2d");
    return push_activation(
        L, torch::adaptive_avg_pool2d(x, size_list(L, 2, "nn.F.adaptive_avg_pool2d", 2)));
  });
}
int fa_adaptive_avg_pool1d(lua_State* L) {
  return guarded(L, [&] {
    auto& x = check_tensor(L, 1, "nn.F.adaptive_avg_pool1d");
    return push_activation(
        L, torch::adaptive_avg_pool1d(x, size_list(L, 2, "nn.F.adaptive_avg_pool1d", 1)));
  });
}
int fa_adaptive_max_pool2d(lua_State* L) {
  return guarded(L, [&] {
    auto& x = check_tensor(L, 1, "nn.F.adaptive_max_pool2d");
    return push_activation(L, std::get<0>(torch::adaptive_max_pool2d(
                                  x, size_list(L, 2, "nn.F.adaptive_max_pool2d", 2))));
  });
}

int fa_pixel_shuffle(lua_State* L) {
  return guarded(L, [&] {
    auto& x = check_tensor(L, 1, "nn.F.pixel_shuffle");
    return push_activation(L, torch::pixel_shuffle(x, check_integer(L, 2, "nn.F.pixel_shuffle")));
  });
}

// one_hot(classes[, num_classes]): classes 1-based, as every class in Lua; int64 rows
int fa_one_hot(lua_State* L) {
  return guarded(L, [&] {
    auto& classes = check_tensor(L, 1, "nn.F.one_hot");
    const int64_t n = lua_isnoneornil(L, 2) ? -1 : check_integer(L, 2, "nn.F.one_hot");
    const int64_t range = n > 0 ? n : std::max<int64_t>(classes.max().item<int64_t>(), 1);
    return push_activation(L, torch::one_hot(nn::zero_based(classes, range, "nn.F.one_hot"), n));
  });
}

// cosine_similarity(a, b[, {dim = 2, eps = 1e-8}])
int fa_cosine_similarity(lua_State* L) {
  return guarded(L, [&] {
    auto& a = check_tensor(L, 1, "nn.F.cosine_similarity");
    auto& b = check_tensor(L, 2, "nn.F.cosine_similarity");
    Options o(L, 3, "nn.F.cosine_similarity", {"dim", "eps"});
    const int64_t dim = to_dim(o.integer("dim", 2), a.dim(), "nn.F.cosine_similarity");
    return push_activation(L, torch::cosine_similarity(a, b, dim, o.number("eps", 1e-8)));
  });
}

const Binding kFunctionalActivations[] = {
    {"relu6", fa_relu6},
    {"selu", fa_selu},
    {"hardswish", fa_hardswish},
    {"hardsigmoid", fa_hardsigmoid},
    {"mish", fa_mish},
    {"logsigmoid", fa_logsigmoid},
    {"softsign", fa_softsign},
    {"elu", fa_elu},
    {"celu", fa_celu},
    {"leaky_relu", fa_leaky_relu},
    {"hardtanh", fa_hardtanh},
    {"softplus", fa_softplus},
    {"glu", fa_glu},
    {"normalize", fa_normalize, "", "dim defaults to 2, PyTorch's dim=1 (dimensions are 1-based)"},
    {"adaptive_avg_pool1d", fa_adaptive_avg_pool1d},
    {"adaptive_avg_pool2d", fa_adaptive_avg_pool2d},
    {"adaptive_max_pool2d", fa_adaptive_max_pool2d, "",
     "returns the pooled values only (PyTorch's return_indices=False)"},
    {"pixel_shuffle", fa_pixel_shuffle},
    {"one_hot", fa_one_hot, "", "classes are 1-based, as every class in Lua"},
    {"cosine_similarity", fa_cosine_similarity, "", "dim defaults to 2, PyTorch's dim=1"},
    {nullptr, nullptr}};

}  // namespace

const Binding* functional_activations() {
  return kFunctionalActivations;
}

}  // namespace engine::lua
