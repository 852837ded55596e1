#include "engine/lua/nn/lua_module.hpp"

#include <optional>
#include <vector>

#include "engine/lua/data/data_value.hpp"
#include "engine/lua/runtime/runtime.hpp"
#include "engine/lua/runtime/tensor_memory.hpp"
#include "engine/lua/torch/tensor_value.hpp"

namespace engine::lua {
namespace {

thread_local std::vector<const torch::nn::Module*>
    running;                                        // Lua modules in forward, innermost last
thread_local std::optional<nn::LayerError> raised;  // the last layer error sent into Lua

}  // namespace

nn::LayerError layer_error_from_lua(const nn::LayerError& error, const torch::nn::Module& layer) {
  raised.reset();
  if (!running.empty()) {
    for (const auto& item : running.back()->named_modules("", false)) {
      if (item.value().get() == &layer) {
        raised = error.nested_in(item.key());
        return *raised;
      }
    }
  }
  raised = error;
  return *raised;
}

LuaModuleImpl::LuaModuleImpl(lua_State* L, int object_ref, std::string class_name)
    : torch::nn::Module(class_name),
      L_(L),
      object_ref_(object_ref),
      class_name_(std::move(class_name)) {}

void LuaModuleImpl::push_object(lua_State* L) const {
  lua_rawgeti(L, LUA_REGISTRYINDEX, object_ref_);
}

std::string LuaModuleImpl::forward_location() const {
  StackGuard guard(L_);
  push_object(L_);
  lua_getfield(L_, -1, "forward");
  if (!lua_isfunction(L_, -1)) return {};
  lua_Debug ar{};
  lua_getinfo(L_, ">S", &ar);
  if (ar.linedefined <= 0) return {};
  return std::string(ar.short_src) + ":" + std::to_string(ar.linedefined) + ": ";
}

torch::Tensor LuaModuleImpl::forward(torch::Tensor input) {
  return call_forward([&] { push_tensor(L_, std::move(input)); });
}

torch::Tensor LuaModuleImpl::forward_inputs(const std::map<std::string, torch::Tensor>& inputs) {
  return call_forward([&] { push_inputs(L_, inputs); });
}

torch::Tensor LuaModuleImpl::call_forward(const std::function<void()>& push_argument) {
  // The object is callable (its __call runs forward), so the whole call, method lookup
  // included, happens inside the protected call.
  push_object(L_);
  push_argument();
  struct Running {
    explicit Running(const torch::nn::Module* m) { running.push_back(m); }
    ~Running() { running.pop_back(); }
  };
  // The tensors forward makes are released when it returns, but for its result and module
  // fields: left to the collector, a Lua mlp's 64 KiB activations made its forward pass 1.08x
  // of the same layers in C++ in engine bench (1.04x released; docs/performance.md).
  TensorScope made_in_forward(L_);
  try {
    Running in_forward(this);
    Runtime::from(L_).call(1, 1);
  } catch (const core::ScriptError& e) {
    // a layer's error that crossed Lua: a LayerError again, with the Lua line that called it
    const std::string text = e.what();
    const auto at = raised ? text.find(raised->what()) : std::string::npos;
    if (at != std::string::npos) {
      // "model.lua:12: ", or where forward is written when the call was a tail call
      const auto error = raised->located(at > 0 ? text.substr(0, at) : forward_location());
      raised.reset();
      throw error;
    }
    throw;
  }
  torch::Tensor* out = test_tensor(L_, -1);
  if (!out) {
    const std::string got = type_name(L_, -1);
    lua_pop(L_, 1);
    throw core::ScriptError(
        class_name_ + ":forward returned a " + got +
        "; a module used as a layer or as the trained model must return a Tensor");
  }
  torch::Tensor result = *out;
  const int top = lua_gettop(L_);
  made_in_forward.close(top, top);
  lua_pop(L_, 1);
  return result;
}

}  // namespace engine::lua
