// require 'nn.core': the module type (nn/module_methods.cpp), the layers (nn/layers.cpp), the
// losses and metrics, and the hooks nn.lua uses to build modules written in Lua.
#include "engine/lua/nn/lua_module.hpp"
#include "engine/lua/nn/nn_tables.hpp"
#include "engine/lua/runtime/libraries.hpp"
#include "engine/nn/loss.hpp"
#include "engine/nn/parameter_slots.hpp"
#include "engine/train/metrics.hpp"

namespace engine::lua {
namespace {

using torch::nn::AnyModule;

// Modules defined in Lua (called by nn.lua).

// core.new_lua_module(class_name, object) -> userdata wrapping a LuaModule bound to object.
int c_new_lua_module(lua_State* L) {
  return guarded(L, [&] {
    const std::string name = check_string(L, 1, "nn.Module:new");
    if (!lua_istable(L, 2)) throw ArgumentError("nn.Module:new: the object must be a table");
    push_new<ModuleBox>(L, ModuleBox{AnyModule(std::make_shared<LuaModuleImpl>(L, 2, name))});
    return 1;
  });
}

LuaModuleImpl& lua_module_of(lua_State* L, int index, const char* function) {
  auto& box = check_module(L, index, function);
  auto* m = dynamic_cast<LuaModuleImpl*>(box.module().get());
  if (!m) throw ArgumentError(std::string(function) + ": not a module defined in Lua");
  return *m;
}

// core.register(owner, name, value) -> 'module' | 'parameter' | nil (a plain field)
int c_register(lua_State* L) {
  return guarded(L, [&] {
    auto& owner = lua_module_of(L, 1, "register");
    const std::string name = check_string(L, 2, "register");
    if (auto* child = test_module(L, 3)) {
      if (owner.named_children().contains(name)) {
        owner.replace_module(name, child->module());
      } else {
        owner.register_module(name, child->module());
      }
      lua_pushstring(L, "module");
      return 1;
    }
    lua_pushnil(L);
    return 1;
  });
}

// core.own_tensors(layer) -> the names of its own non-empty parameters, of its buffers, and
// whether it holds layers of its own that Lua cannot list (a built-in layer as a Lua module's
// base: nn.lua registers the same tensors on the Lua module)
int c_own_tensors(lua_State* L) {
  return guarded(L, [&] {
    auto& module = *check_module(L, 1, "own_tensors").module();
    lua_newtable(L);
    int i = 1;
    for (const auto& item : module.named_parameters(/*recurse=*/false)) {
      lua_pushstring(L, item.key().c_str());
      lua_rawseti(L, -2, i++);
    }
    lua_newtable(L);
    i = 1;
    for (const auto& item : module.named_buffers(/*recurse=*/false)) {
      lua_pushstring(L, item.key().c_str());
      lua_rawseti(L, -2, i++);
    }
    bool hidden = false;  // a child Lua cannot call (a ModuleList of layers)
    if (dynamic_cast<nn::SequentialImpl*>(&module) == nullptr) {
      for (const auto& child : module.children()) hidden = hidden || !callable_child(child);
    }
    lua_pushboolean(L, hidden);
    return 3;
  });
}

int c_is_module(lua_State* L) {
  lua_pushboolean(L, test_module(L, 1) != nullptr);
  return 1;
}

int c_register_parameter(lua_State* L) {
  return guarded(L, [&] {
    auto& owner = lua_module_of(L, 1, "register_parameter");
    const std::string name = check_string(L, 2, "register_parameter");
    auto& t = check_tensor(L, 3, "register_parameter");
    if (name.empty() || name.find('.') != std::string::npos) {
      throw ArgumentError("a parameter's name must be non-empty without dots, got '" + name + "'");
    }
    nn::set_own_parameter(owner, name, t);  // a field assigned again replaces its parameter
    push_tensor(L, t);
    return 1;
  });
}

int c_register_buffer(lua_State* L) {
  return guarded(L, [&] {
    auto& owner = lua_module_of(L, 1, "register_buffer");
    const std::string name = check_string(L, 2, "register_buffer");
    auto& t = check_tensor(L, 3, "register_buffer");
    if (name.empty() || name.find('.') != std::string::npos) {
      throw ArgumentError("a buffer's name must be non-empty without dots, got '" + name + "'");
    }
    nn::set_own_buffer(owner, name, t);
    push_tensor(L, t);
    return 1;
  });
}

// Losses and metrics.

template <nn::Loss::Kind Kind>
int l_loss(lua_State* L) {
  const std::string full_name = "nn." + nn::Loss(Kind).name();
  const char* name = full_name.c_str();
  return guarded(L, [&] {
    push_new<LossBox>(L, LossBox{loss_from_options(L, 1, Kind, name)});
    return 1;
  });
}

int loss_call(lua_State* L) {
  return guarded(L, [&] {
    auto& box = check<LossBox>(L, 1, "loss");
    auto& output = check_tensor(L, 2, "loss");
    auto& target = check_tensor(L, 3, "loss");
    push_tensor(L, box.loss->of_script_targets(output, target));
    return 1;
  });
}

int loss_tostring(lua_State* L) {
  return guarded(L, [&] {
    const std::string name = check<LossBox>(L, 1, "tostring").loss->name() + "()";
    lua_pushstring(L, name.c_str());
    return 1;
  });
}

int metric_accuracy(lua_State* L) {
  return guarded(L, [&] {
    auto& output = check_tensor(L, 1, "nn.metrics.accuracy");
    auto& target = check_tensor(L, 2, "nn.metrics.accuracy");
    lua_pushnumber(L, train::accuracy(output.detach(), nn::zero_based_classes(target)));
    return 1;
  });
}

int metric_topk(lua_State* L) {
  return guarded(L, [&] {
    auto& output = check_tensor(L, 1, "nn.metrics.topk");
    auto& target = check_tensor(L, 2, "nn.metrics.topk");
    const int64_t k = check_integer(L, 3, "nn.metrics.topk");
    lua_pushnumber(L, train::topk_accuracy(output.detach(), nn::zero_based_classes(target), k));
    return 1;
  });
}

const Binding kLibrary[] = {{"NLLLoss", l_loss<nn::Loss::Kind::kNll>},
                            {"CrossEntropyLoss", l_loss<nn::Loss::Kind::kCrossEntropy>},
                            {"MSELoss", l_loss<nn::Loss::Kind::kMse>},
                            {"L1Loss", l_loss<nn::Loss::Kind::kL1>},
                            {"SmoothL1Loss", l_loss<nn::Loss::Kind::kSmoothL1>},
                            {"BCEWithLogitsLoss", l_loss<nn::Loss::Kind::kBceWithLogits>},
                            {"BCELoss", l_loss<nn::Loss::Kind::kBce>},
                            {"KLDivLoss", l_loss<nn::Loss::Kind::kKlDiv>, "",
                             "reduction 'mean' averages over elements, as PyTorch's (which "
                             "warns): 'batchmean' is the KL divergence"},
                            {"HuberLoss", l_loss<nn::Loss::Kind::kHuber>},
                            {"new_lua_module", c_new_lua_module},
                            {"forward_call", forward_call},
                            {"register", c_register},
                            {"is_module", c_is_module},
                            {"own_tensors", c_own_tensors},
                            {"register_parameter", c_register_parameter},
                            {"register_buffer", c_register_buffer},
                            {nullptr, nullptr}};

}  // namespace

int open_nn_core(lua_State* L) {
  require_library(L, "torch");
  start_pin_sweeps(L);  // Lua-defined modules nothing holds are collected (lua_module.hpp)
  define_type(L, ModuleBox::kTypeName, module_methods(), module_metamethods(), module_box_gc,
              module_index);
  push_metatable(L, ModuleBox::kTypeName);
  static const luaL_Reg loss_meta[] = {
      {"__call", loss_call}, {"__tostring", loss_tostring}, {nullptr, nullptr}};
  define_type(L, LossBox::kTypeName, nullptr, loss_meta, gc_userdata<LossBox>);

  lua_newtable(L);
  set_bindings(L, layer_functions());
  set_bindings(L, activation_layer_functions());
  set_bindings(L, recurrent_layer_functions());
  set_bindings(L, resize_layer_functions());
  set_bindings(L, transformer_layer_functions());
  set_bindings(L, kLibrary);
  lua_getfield(L, -2, "__methods");
  lua_setfield(L, -2, "module_methods");  // nn.lua adds Lua-written methods to built-ins
  push_parameter_marks(L);
  lua_setfield(L, -2, "parameter_marks");  // nn.Parameter's marks
  lua_newtable(L);  // the layers' names: nn.lua makes each a class Lua modules may extend
  int position = 1;
  for (const Binding* table :
       {layer_functions(), activation_layer_functions(), recurrent_layer_functions(),
        resize_layer_functions(), transformer_layer_functions()}) {
    for (const Binding* b = table; b->name; ++b) {
      lua_pushstring(L, b->name);
      lua_rawseti(L, -2, position++);
    }
  }
  lua_setfield(L, -2, "layer_names");
  push_square_subsequent_mask_function(
      L);  // nn.lua: nn.Transformer.generate_square_subsequent_mask
  lua_setfield(L, -2, "square_subsequent_mask");
  lua_newtable(L);
  lua_pushcfunction(L, metric_accuracy);
  lua_setfield(L, -2, "accuracy");
  lua_pushcfunction(L, metric_topk);
  lua_setfield(L, -2, "topk");
  lua_setfield(L, -2, "metrics");
  lua_remove(L, -2);  // the Module metatable
  return 1;
}

}  // namespace engine::lua
