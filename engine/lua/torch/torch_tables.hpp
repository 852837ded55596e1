// The function tables of require 'torch', one set per file of this folder (methods, metamethods,
// torch.* functions) and the helpers those files share; library.cpp assembles the tables.
#pragma once

#include <string>
#include <tuple>

#include "engine/lua/runtime/runtime.hpp"
#include "engine/lua/torch/tensor_value.hpp"

namespace engine::lua {

// The tensor a method is called on (argument 1).
inline torch::Tensor& self(lua_State* L, const char* function) {
  return check_tensor(L, 1, function);
}
// Pushes values and their 1-based positions, as sort, topk, max and min return them.
inline int push_with_positions(lua_State* L, const std::tuple<torch::Tensor, torch::Tensor>& r) {
  push_tensor(L, std::get<0>(r));
  push_tensor(L, std::get<1>(r) + 1);
  return 2;
}
// Returns x itself (at index 1) after an in-place op, or the new tensor. (index.cpp)
int push_result(lua_State* L, bool in_place, const torch::Tensor& result);
// tostring(x): values, then dtype, device and requires_grad when they are not the defaults.
// (convert.cpp)
std::string tensor_string(const torch::Tensor& tensor);
// x[i], x[{i, j}], x.method: the tensor type's __index. (index.cpp)
int tensor_index(lua_State* L);
// The attributes a tensor answers besides its methods (x.grad, x.shape...). (index.cpp)
std::vector<std::string> tensor_field_names();

// A concern's share: its tensor methods (x:name), metamethods and torch.* functions, each list
// ending with {nullptr, nullptr}.
struct TorchTables {
  const Binding* methods;
  const luaL_Reg* meta;
  const Binding* functions;
};
TorchTables construct_tables();
TorchTables index_tables();
TorchTables math_tables();
TorchTables reduce_tables();
TorchTables autograd_tables();
TorchTables convert_tables();
TorchTables like_tables();
TorchTables rearrange_tables();
// torch.float32 = 'float32' and PyTorch's other dtype names (like.cpp)
void add_dtype_names(lua_State* L, int library);
const Binding* linalg_functions();    // torch.linalg
const Binding* autograd_functions();  // torch.autograd

}  // namespace engine::lua
