// nn.utils: PyTorch's torch.nn.utils that loops written by hand use: clip_grad_norm_ and
// clip_grad_value_ over a module's parameters or a list of tensors. (The trainer clips with its
// clip_grad_norm and clip_grad_value options.)
#include <torch/nn/utils/clip_grad.h>

#include "engine/lua/nn/module_value.hpp"
#include "engine/lua/runtime/libraries.hpp"
#include "engine/lua/torch/tensor_value.hpp"
#include "engine/nn/parameter_slots.hpp"

namespace engine::lua {
namespace {

std::vector<torch::Tensor> clipped_parameters(lua_State* L, const char* function) {
  if (auto* module = test_module(L, 1)) return nn::unique_parameters(*module->module());
  if (auto* t = test_tensor(L, 1)) return {*t};
  return tensor_list(L, 1, function);
}

// clip_grad_norm_(params, max_norm[, {norm_type = 2}]) -> the total norm before clipping
int u_clip_grad_norm(lua_State* L) {
  return guarded(L, [&] {
    auto params = clipped_parameters(L, "nn.utils.clip_grad_norm_");
    const double max_norm = check_number(L, 2, "nn.utils.clip_grad_norm_");
    Options o(L, 3, "nn.utils.clip_grad_norm_", {"norm_type"});
    lua_pushnumber(L,
                   torch::nn::utils::clip_grad_norm_(params, max_norm, o.number("norm_type", 2)));
    return 1;
  });
}

int u_clip_grad_value(lua_State* L) {
  return guarded(L, [&] {
    auto params = clipped_parameters(L, "nn.utils.clip_grad_value_");
    torch::nn::utils::clip_grad_value_(params, check_number(L, 2, "nn.utils.clip_grad_value_"));
    return 0;
  });
}

const Binding kUtils[] = {{"clip_grad_norm_", u_clip_grad_norm, "",
                           "returns the total norm as a number (PyTorch: a 0-dim tensor)"},
                          {"clip_grad_value_", u_clip_grad_value},
                          {nullptr, nullptr}};

}  // namespace

void add_utils(lua_State* L, int library) {
  add_bindings_table(L, library, "utils", {kUtils});
}

}  // namespace engine::lua
