// Tensors as Lua values: the userdata type, and the conversions other bindings share
// (1-based dimensions, shapes from varargs or tables, tensors-or-numbers).
#pragma once

#include <torch/types.h>

#include <string>
#include <vector>

#include "engine/lua/runtime/runtime.hpp"
#include "engine/nn/positions.hpp"

namespace engine::lua {

struct TensorBox {
  static constexpr char kTypeName[] = "Tensor";  // one address in every file: the tag
  torch::Tensor tensor;
  bool pinned = false;  // x:keep(): no torch.scope releases it (tensor_memory.hpp)
};

void push_tensor(lua_State* L, torch::Tensor tensor);
torch::Tensor& check_tensor(lua_State* L, int index, const char* function);
torch::Tensor* test_tensor(lua_State* L, int index);
// A tensor (borrowed from its userdata, no reference count traffic), or a number turned into
// a 0-dim tensor (for arithmetic with numbers).
c10::MaybeOwned<torch::Tensor> tensor_or_scalar(lua_State* L, int index, const char* function);
// A Lua number as PyTorch takes a Python literal: integral values as ints, others as floats.
at::Scalar number_scalar(double v);

// A tensor field of an options table (raw access), or an undefined tensor when absent; any
// other value is an error naming the option.
torch::Tensor tensor_option(lua_State* L, int index, const char* key, const char* function);

// A user's 1-based dimension (negative counts from the end) as libtorch's 0-based one.
// Throws with a message in 1-based terms when it is out of range for `rank` dimensions.
int64_t to_dim(int64_t user_dim, int64_t rank, const char* function);
int64_t check_dim(lua_State* L, int index, int64_t rank, const char* function);

// Sizes from `f(2, 3)`, `f{2, 3}` or `f({2, 3})` starting at index `first`; stops at a
// non-number. Sets *next to the index after the last one read.
std::vector<int64_t> read_shape(lua_State* L, int first, const char* function, int* next);

// A Lua list of tensors (non-empty); errors name the element that is not a tensor.
std::vector<torch::Tensor> tensor_list(lua_State* L, int index, const char* function);

// Index tensors and class targets cross between 1-based Lua and 0-based libtorch through
// engine/nn/positions.hpp (nn::zero_based, nn::one_based_classes, nn::zero_based_classes).

// Pushes a Lua list of sizes.
void push_shape(lua_State* L, c10::IntArrayRef shape);

}  // namespace engine::lua
