// The tensor value shared by every binding: pushing and checking tensors, 1-based dimensions
// and indices converted to 0-based ones, shapes and lists read from Lua (tensor_value.hpp).
#include "engine/lua/torch/tensor_value.hpp"

#include "engine/core/device.hpp"
#include "engine/lua/runtime/tensor_memory.hpp"

namespace engine::lua {

void push_tensor(lua_State* L, torch::Tensor tensor) {
  track_pushed_tensor(L, push_new<TensorBox>(L, TensorBox{std::move(tensor)}).tensor);
}

torch::Tensor* test_tensor(lua_State* L, int index) {
  auto* box = test<TensorBox>(L, index);
  return box ? &box->tensor : nullptr;
}

torch::Tensor& check_tensor(lua_State* L, int index, const char* function) {
  return check<TensorBox>(L, index, function).tensor;
}

// A Lua number becomes a "wrapped number", the 0-dim tensor Python passes for a literal, so
// type promotion treats it as a scalar: integral values act as Python ints (int tensor + 1
// stays int64), others as Python floats (int tensor * 1.5 is float32, not float64).
torch::Tensor wrapped_number(const at::Scalar& value) {
  auto t = c10::scalar_to_tensor(value);
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
}

at::Scalar number_scalar(double v) {
  const bool integral = std::floor(v) == v && std::fabs(v) < 9.0e15;
  return integral ? at::Scalar(static_cast<int64_t>(v)) : at::Scalar(v);
}

c10::MaybeOwned<torch::Tensor> tensor_or_scalar(lua_State* L, int index, const char* function) {
  using Owned = c10::MaybeOwned<torch::Tensor>;
  if (auto* t = test_tensor(L, index)) return Owned::borrowed(*t);
  if (lua_type(L, index) == LUA_TNUMBER) {
    return Owned::owned(wrapped_number(number_scalar(lua_tonumber(L, index))));
  }
  if (lua_type(L, index) == LUA_TBOOLEAN) {
    return Owned::owned(wrapped_number(lua_toboolean(L, index) != 0));
  }
  throw ArgumentError(std::string("bad argument #") + std::to_string(index) + " to '" + function +
                      "' (Tensor or number expected, got " + found_instead<TensorBox>(L, index) +
                      ")");
}

int64_t to_dim(int64_t user_dim, int64_t rank, const char* function) {
  const int64_t r = std::max<int64_t>(rank, 1);  // a 0-dim tensor accepts dim 1 / -1, like PyTorch
  if (user_dim >= 1 && user_dim <= r) return user_dim - 1;
  if (user_dim <= -1 && user_dim >= -r) return user_dim;
  throw ArgumentError(std::string(function) + ": dimension " + std::to_string(user_dim) +
                      " is out of range for a tensor with " + std::to_string(rank) +
                      " dimension(s) (expected 1.." + std::to_string(r) + " or -" +
                      std::to_string(r) + "..-1)");
}

int64_t check_dim(lua_State* L, int index, int64_t rank, const char* function) {
  return to_dim(check_integer(L, index, function), rank, function);
}

std::vector<int64_t> read_shape(lua_State* L, int first, const char* function, int* next) {
  std::vector<int64_t> shape;
  int i = first;
  if (lua_istable(L, i) && !test_tensor(L, i) && lua_objlen(L, i) > 0) {
    shape = integer_list(L, i, std::string(function) + ": shape");
    ++i;
  } else {
    for (; lua_type(L, i) == LUA_TNUMBER; ++i) shape.push_back(check_integer(L, i, function));
  }
  if (next) *next = i;
  return shape;
}

void push_shape(lua_State* L, c10::IntArrayRef shape) {
  lua_createtable(L, static_cast<int>(shape.size()), 0);
  for (size_t i = 0; i < shape.size(); ++i) {
    lua_pushnumber(L, static_cast<double>(shape[i]));
    lua_rawseti(L, -2, static_cast<int>(i + 1));
  }
}

std::vector<torch::Tensor> tensor_list(lua_State* L, int index, const char* function) {
  if (!lua_istable(L, index) || test_tensor(L, index)) {
    throw ArgumentError(std::string(function) + ": expected a list of tensors, got " +
                        type_name(L, index));
  }
  std::vector<torch::Tensor> out;
  const size_t n = lua_objlen(L, index);
  for (size_t i = 1; i <= n; ++i) {
    lua_rawgeti(L, index, static_cast<int>(i));
    auto* t = test_tensor(L, -1);
    if (!t) {
      const std::string got = found_instead<TensorBox>(L, -1);
      lua_pop(L, 1);
      throw ArgumentError(std::string(function) + ": element " + std::to_string(i) +
                          " (Tensor expected, got " + got + ")");
    }
    out.push_back(*t);
    lua_pop(L, 1);
  }
  if (out.empty())
    throw ArgumentError(std::string(function) + ": expected a non-empty list of tensors");
  return out;
}

torch::Tensor tensor_option(lua_State* L, int index, const char* key, const char* function) {
  if (!lua_istable(L, index)) return torch::Tensor();
  lua_pushstring(L, key);
  lua_rawget(L, absolute_index(L, index));
  torch::Tensor out;
  if (auto* t = test_tensor(L, -1)) {
    out = *t;
  } else if (!lua_isnil(L, -1)) {
    const std::string got = type_name(L, -1);
    lua_pop(L, 1);
    throw ArgumentError(std::string(function) + ": option '" + key + "' must be a tensor, got " +
                        got);
  }
  lua_pop(L, 1);
  return out;
}

}  // namespace engine::lua
