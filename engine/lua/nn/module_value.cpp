// The module value shared by the bindings: modules pushed as userdata (Lua-defined ones as
// their Lua object), read back as nn::Model, losses built from options (module_value.hpp).
#include "engine/lua/nn/module_value.hpp"

#include "engine/lua/nn/lua_module.hpp"
#include "engine/lua/torch/tensor_value.hpp"
#include "engine/nn/layers.hpp"
#include "engine/nn/sequential.hpp"

namespace engine::lua {

namespace {
const char kParameterMarks = 0;  // its address is the registry key of the marks table
}  // namespace

void push_parameter_marks(lua_State* L) {
  push_registry_table(L, &kParameterMarks, "k");
}

void push_parameter(lua_State* L, const torch::Tensor& parameter) {
  push_tensor(L, parameter);
  push_parameter_marks(L);
  lua_pushvalue(L, -2);
  lua_pushboolean(L, 1);
  lua_rawset(L, -3);
  lua_pop(L, 1);
}

void push_module(lua_State* L, const torch::nn::AnyModule& module) {
  if (auto* lua_defined = dynamic_cast<LuaModuleImpl*>(module.ptr().get())) {
    lua_defined->push_object(L);
    return;
  }
  push_new<ModuleBox>(L, ModuleBox{module});
}

ModuleBox* test_module(lua_State* L, int index) {
  ModuleBox* box = test<ModuleBox>(L, index);
  if (!box && lua_istable(L, index)) {
    index = absolute_index(L, index);
    lua_pushliteral(L, "__cpp");  // a raw field set by nn.lua: no metamethod may run here
    lua_rawget(L, index);
    box = test<ModuleBox>(L, -1);
    lua_pop(L, 1);
  }
  // C++ may keep what it takes from here: the object must live while it does
  if (box) {
    if (auto* lua_defined = lua_module_in(box->any)) lua_defined->pin(L);
  }
  return box;
}

ModuleBox& check_module(lua_State* L, int index, const char* function) {
  if (auto* box = test_module(L, index)) return *box;
  throw ArgumentError(std::string("bad argument #") + std::to_string(index) + " to '" + function +
                      "' (module expected, got " + found_instead<ModuleBox>(L, index) + ")");
}

nn::Model model_from(const ModuleBox& box) {
  auto any = std::make_shared<torch::nn::AnyModule>(box.any);
  nn::Model model{box.module(),
                  [any](const torch::Tensor& x) { return nn::forward_layer(*any, x); }};
  if (auto lua_defined = std::dynamic_pointer_cast<LuaModuleImpl>(box.module())) {
    model.forward_named = [lua_defined](const std::map<std::string, torch::Tensor>& inputs) {
      return lua_defined->forward_inputs(inputs);
    };
    model.name = lua_defined->class_name();
  } else {
    // "engine::nn::SequentialImpl" -> "Sequential"
    std::string name = box.module()->name();
    name = name.substr(name.rfind("::") == std::string::npos ? 0 : name.rfind("::") + 2);
    if (name.size() > 4 && name.compare(name.size() - 4, 4, "Impl") == 0)
      name.resize(name.size() - 4);
    model.name = name;
  }
  for (const auto& module : box.module()->modules()) {  // itself first
    if (auto lua_defined = std::dynamic_pointer_cast<LuaModuleImpl>(module)) {
      const std::weak_ptr<LuaModuleImpl> weak = lua_defined;
      model.collect_garbage = [weak] {
        if (auto alive = weak.lock()) alive->collect_garbage();
      };
      break;
    }
  }
  return model;
}

std::shared_ptr<nn::Loss> loss_from_options(lua_State* L, int index, nn::Loss::Kind kind,
                                            const char* function) {
  using Kind = nn::Loss::Kind;
  const char* parameter = kind == Kind::kCrossEntropy    ? "label_smoothing"
                          : kind == Kind::kSmoothL1      ? "beta"
                          : kind == Kind::kHuber         ? "delta"
                          : kind == Kind::kKlDiv         ? "log_target"
                          : kind == Kind::kBceWithLogits ? "pos_weight"
                          : kind == Kind::kBce           ? "weight"
                                                         : nullptr;
  Options o(L, index, function,
            parameter ? std::initializer_list<const char*>{"reduction", parameter}
                      : std::initializer_list<const char*>{"reduction"});
  const auto reduction = nn::parse_reduction(o.string("reduction", "mean"));
  if (kind == Kind::kBceWithLogits || kind == Kind::kBce) {
    return std::make_shared<nn::Loss>(kind, reduction, -1.0,
                                      tensor_option(L, index, parameter, function));
  }
  if (kind == Kind::kKlDiv) {
    return std::make_shared<nn::Loss>(kind, reduction, o.boolean("log_target", false) ? 1.0 : 0.0);
  }
  return std::make_shared<nn::Loss>(kind, reduction, parameter ? o.number(parameter, -1.0) : -1.0);
}

}  // namespace engine::lua
