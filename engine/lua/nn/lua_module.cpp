#include "engine/lua/nn/lua_module.hpp"

#include "engine/lua/runtime/runtime.hpp"
#include "engine/lua/torch/tensor_value.hpp"

namespace engine::lua {

LuaModuleImpl::LuaModuleImpl(lua_State* L, int object_ref, std::string class_name)
    : torch::nn::Module(class_name),
      L_(L),
      object_ref_(object_ref),
      class_name_(std::move(class_name)) {}

void LuaModuleImpl::push_object(lua_State* L) const {
  lua_rawgeti(L, LUA_REGISTRYINDEX, object_ref_);
}

torch::Tensor LuaModuleImpl::forward(torch::Tensor input) {
  // The object is callable (its __call runs forward), so the whole call, method lookup
  // included, happens inside the protected call.
  push_object(L_);
  push_tensor(L_, std::move(input));
  Runtime::from(L_).call(1, 1);
  torch::Tensor* out = test_tensor(L_, -1);
  if (!out) {
    const std::string got = type_name(L_, -1);
    lua_pop(L_, 1);
    throw core::ScriptError(
        class_name_ + ":forward returned a " + got +
        "; a module used as a layer or as the trained model must return a Tensor");
  }
  torch::Tensor result = *out;
  lua_pop(L_, 1);
  return result;
}

}  // namespace engine::lua
