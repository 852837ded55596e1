// Part of require 'nn.core': the methods of a module (forward, parameters, state_dict, train,
// eval, to, zero_grad...), its __index (methods, then children by name) and __call.
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/rnn.h>

#include "engine/lua/nn/lua_module.hpp"
#include "engine/lua/nn/nn_tables.hpp"
#include "engine/nn/convert.hpp"
#include "engine/nn/parameter_slots.hpp"

namespace engine::lua {
namespace {

using torch::nn::AnyModule;

nn::SequentialImpl* as_sequential(ModuleBox& box) {
  return dynamic_cast<nn::SequentialImpl*>(box.module().get());
}

// Layers whose forward takes or returns more than one tensor; returns -1 for the others.
int forward_several(lua_State* L, torch::nn::Module* module) {
  if (const int n = forward_recurrent(L, module); n >= 0) return n;
  if (const int n = forward_transformer(L, module); n >= 0) return n;
  auto optional_tensor = [&](int index) {
    return lua_isnoneornil(L, index) ? torch::Tensor() : check_tensor(L, index, "forward");
  };
  if (auto* lstm = dynamic_cast<torch::nn::LSTMImpl*>(module)) {
    // lstm(x[, {h, c}]) -> output, {h, c}
    c10::optional<std::tuple<torch::Tensor, torch::Tensor>> state;
    if (!lua_isnoneornil(L, 3)) {
      if (!lua_istable(L, 3)) {
        throw ArgumentError("bad argument #3 to 'forward' (LSTM state {h, c} expected, got " +
                            type_name(L, 3) + ")");
      }
      torch::Tensor hc[2];
      for (int i = 0; i < 2; ++i) {
        lua_rawgeti(L, 3, i + 1);
        auto* t = test_tensor(L, -1);
        if (!t) {
          const std::string got = type_name(L, -1);
          lua_pop(L, 1);
          throw ArgumentError("bad argument #3 to 'forward' (LSTM state {h, c}: element " +
                              std::to_string(i + 1) + " is " + got + ", expected a Tensor)");
        }
        hc[i] = *t;
        lua_pop(L, 1);
      }
      state = std::make_tuple(hc[0], hc[1]);
    }
    auto [out, hc] = lstm->forward(check_tensor(L, 2, "forward"), state);
    push_tensor(L, out);
    lua_createtable(L, 2, 0);
    push_tensor(L, std::get<0>(hc));
    lua_rawseti(L, -2, 1);
    push_tensor(L, std::get<1>(hc));
    lua_rawseti(L, -2, 2);
    return 2;
  }
  if (auto* gru = dynamic_cast<torch::nn::GRUImpl*>(module)) {
    auto [out, h] = gru->forward(check_tensor(L, 2, "forward"), optional_tensor(3));
    push_tensor(L, out);
    push_tensor(L, h);
    return 2;
  }
  if (auto* attention = dynamic_cast<nn::MultiheadAttentionImpl*>(module)) {
    // attn(q, k, v[, {key_padding_mask, need_weights = true, attn_mask}]) -> output, weights
    Options o(L, 5, "MultiheadAttention", {"key_padding_mask", "need_weights", "attn_mask"});
    auto [out, weights] = attention->forward(
        check_tensor(L, 2, "forward"), check_tensor(L, 3, "forward"), check_tensor(L, 4, "forward"),
        tensor_option(L, 5, "key_padding_mask", "MultiheadAttention"),
        o.boolean("need_weights", true), tensor_option(L, 5, "attn_mask", "MultiheadAttention"));
    push_tensor(L, out);
    if (weights.defined()) {
      push_tensor(L, weights);
    } else {
      lua_pushnil(L);
    }
    return 2;
  }
  if (auto* layer = dynamic_cast<nn::TransformerEncoderLayerImpl*>(module)) {
    Options o(L, 3, "TransformerEncoderLayer", {"src_mask", "src_key_padding_mask"});
    push_tensor(
        L, layer->forward(check_tensor(L, 2, "forward"),
                          tensor_option(L, 3, "src_mask", "TransformerEncoderLayer"),
                          tensor_option(L, 3, "src_key_padding_mask", "TransformerEncoderLayer")));
    return 1;
  }
  if (auto* bilinear = dynamic_cast<torch::nn::BilinearImpl*>(module)) {
    push_tensor(L, bilinear->forward(check_tensor(L, 2, "forward"), check_tensor(L, 3, "forward")));
    return 1;
  }
  if (auto* bag = dynamic_cast<nn::OneBasedEmbeddingBagImpl*>(module)) {
    push_tensor(
        L, bag->forward(check_tensor(L, 2, "forward"), optional_tensor(3), optional_tensor(4)));
    return 1;
  }
  return -1;
}

int m_forward(lua_State* L) {
  return guarded(L, [&] {
    auto& box = check_module(L, 1, "forward");
    if (box.several_tensors != 0) {
      const int n = forward_several(L, box.module().get());
      box.several_tensors = n >= 0 ? 1 : 0;
      if (n >= 0) return n;
    }
    auto& x = check_tensor(L, 2, "forward");
    try {
      push_tensor(L, nn::forward_layer(box.any, x));
    } catch (const nn::LayerError& e) {
      throw layer_error_from_lua(e, *box.module(), L);
    }
    return 1;
  });
}

int m_parameters(lua_State* L) {
  return guarded(L, [&] {
    auto params = nn::unique_parameters(*check_module(L, 1, "parameters").module());
    lua_createtable(L, static_cast<int>(params.size()), 0);
    for (size_t i = 0; i < params.size(); ++i) {
      push_parameter(L, params[i]);
      lua_rawseti(L, -2, static_cast<int>(i + 1));
    }
    return 1;
  });
}

// Two parallel lists, names and tensors, in libtorch's (= PyTorch's) order.
template <bool Buffers>
int m_named_lists(lua_State* L) {
  return guarded(L, [&] {
    auto& box = check_module(L, 1, "named_parameters");
    std::vector<std::pair<std::string, torch::Tensor>> items;
    if (Buffers) {
      for (const auto& item : box.module()->named_buffers())
        items.emplace_back(item.key(), item.value());
    } else {
      items = nn::unique_named_parameters(*box.module());  // a tied weight once, as PyTorch
    }
    lua_createtable(L, static_cast<int>(items.size()), 0);
    lua_createtable(L, static_cast<int>(items.size()), 0);
    int i = 1;
    for (const auto& [name, tensor] : items) {
      lua_pushstring(L, name.c_str());
      lua_rawseti(L, -3, i);
      if (Buffers) {
        push_tensor(L, tensor);
      } else {
        push_parameter(L, tensor);
      }
      lua_rawseti(L, -2, i);
      ++i;
    }
    return 2;
  });
}

// Two parallel lists, the names and the modules of the direct children, in registration order
// (PyTorch's). Children of nn.Sequential are named "0", "1", ...; those of a module written in
// Lua are the fields they were assigned to; a built-in layer lists those Lua can call.
int m_named_children_lists(lua_State* L) {
  return guarded(L, [&] {
    auto& box = check_module(L, 1, "named_children");
    lua_newtable(L);
    lua_newtable(L);
    const int names = lua_gettop(L) - 1, values = names + 1;
    if (auto* seq = as_sequential(box)) {
      for (size_t i = 0; i < seq->size(); ++i) {
        lua_pushstring(L, std::to_string(i).c_str());
        lua_rawseti(L, names, static_cast<int>(i + 1));
        push_module(L, seq->at(i));
        lua_rawseti(L, values, static_cast<int>(i + 1));
      }
    } else if (auto* lua_defined = dynamic_cast<LuaModuleImpl*>(box.module().get())) {
      int i = 1;
      for (const auto& child : lua_defined->named_children()) {
        lua_defined->push_object(L);
        lua_pushliteral(L, "__fields");
        lua_rawget(L, -2);
        lua_pushstring(L, child.key().c_str());
        lua_rawget(L, -2);  // the field holding the child
        if (!lua_isnil(L, -1)) {
          lua_rawseti(L, values, i);
          lua_pushstring(L, child.key().c_str());
          lua_rawseti(L, names, i);
          ++i;
          lua_pop(L, 2);
        } else {
          lua_pop(L, 3);
        }
      }
    } else {
      // a built-in layer: the children Lua can call (a Transformer's encoder and decoder)
      int i = 1;
      for (const auto& child : box.module()->named_children()) {
        auto callable = callable_child(child.value());
        if (!callable) continue;
        lua_pushstring(L, child.key().c_str());
        lua_rawseti(L, names, i);
        push_module(L, *callable);
        lua_rawseti(L, values, i);
        ++i;
      }
    }
    return 2;
  });
}

int m_state_dict(lua_State* L) {
  return guarded(L, [&] {
    auto module = check_module(L, 1, "state_dict").module();
    lua_newtable(L);
    for (const auto& p : module->named_parameters()) {
      push_tensor(L, p.value().detach());
      lua_setfield(L, -2, p.key().c_str());
    }
    for (const auto& b : module->named_buffers()) {
      push_tensor(L, b.value());
      lua_setfield(L, -2, b.key().c_str());
    }
    return 1;
  });
}

int m_load_state_dict(lua_State* L) {
  return guarded(L, [&] {
    auto module = check_module(L, 1, "load_state_dict").module();
    if (!lua_istable(L, 2))
      throw ArgumentError("load_state_dict: expected a table of name = tensor");
    Options o(L, 3, "load_state_dict", {"strict"});
    const bool strict = o.boolean("strict", true);
    std::map<std::string, torch::Tensor> own;
    for (const auto& p : module->named_parameters()) own[p.key()] = p.value();
    for (const auto& b : module->named_buffers()) own[b.key()] = b.value();
    std::map<std::string, torch::Tensor> given;
    lua_pushnil(L);
    while (lua_next(L, 2) != 0) {
      auto* t = test_tensor(L, -1);
      if (lua_type(L, -2) == LUA_TSTRING && t) given[lua_tostring(L, -2)] = *t;
      lua_pop(L, 1);
    }
    std::vector<std::string> missing, unexpected, mismatched;
    for (const auto& [name, t] : own) {
      auto it = given.find(name);
      if (it == given.end())
        missing.push_back(name);
      else if (!it->second.sizes().equals(t.sizes())) {
        mismatched.push_back(name + " (checkpoint " + core::shape_string(it->second.sizes()) +
                             ", model " + core::shape_string(t.sizes()) + ")");
      }
    }
    for (const auto& [name, t] : given) {
      if (!own.count(name)) unexpected.push_back(name);
    }
    if (!mismatched.empty() || (strict && (!missing.empty() || !unexpected.empty()))) {
      std::string msg = "load_state_dict: the state does not match the model";
      if (!missing.empty()) msg += "\n  missing keys: " + core::join(missing);
      if (!unexpected.empty()) msg += "\n  unexpected keys: " + core::join(unexpected);
      if (!mismatched.empty()) msg += "\n  shape differences: " + core::join(mismatched);
      throw ArgumentError(msg);
    }
    torch::NoGradGuard no_grad;
    for (auto& [name, t] : own) {
      auto it = given.find(name);
      if (it != given.end()) t.copy_(it->second);
    }
    return 0;
  });
}

int m_train(lua_State* L) {
  return guarded(L, [&] {
    const bool on = lua_isnoneornil(L, 2) ? true : lua_toboolean(L, 2) != 0;
    check_module(L, 1, "train").module()->train(on);
    lua_settop(L, 1);
    return 1;
  });
}

int m_eval(lua_State* L) {
  return guarded(L, [&] {
    check_module(L, 1, "eval").module()->eval();
    lua_settop(L, 1);
    return 1;
  });
}

int m_is_training(lua_State* L) {
  return guarded(L, [&] {
    lua_pushboolean(L, check_module(L, 1, "is_training").module()->is_training());
    return 1;
  });
}

int m_to(lua_State* L) {
  return guarded(L, [&] {
    auto module = check_module(L, 1, "to").module();
    if (lua_type(L, 2) == LUA_TSTRING) {
      const std::string what = lua_tostring(L, 2);
      if (what == "cpu" || what.rfind("cuda", 0) == 0)
        module->to(core::parse_device(what));
      else
        nn::to_floating_dtype(*module, core::parse_dtype(what));
    } else {
      Options o(L, 2, "to", {"dtype", "device"});
      if (o.has("device")) module->to(core::parse_device(o.string("device", "cpu")));
      if (o.has("dtype")) {
        nn::to_floating_dtype(*module, core::parse_dtype(o.string("dtype", "float32")));
      }
    }
    lua_settop(L, 1);
    return 1;
  });
}

// m:zero_grad([set_to_none]): gradients released (nil) unless set_to_none is false, as
// opt:zero_grad and PyTorch 2.
int m_zero_grad(lua_State* L) {
  return guarded(L, [&] {
    auto module = check_module(L, 1, "zero_grad").module();
    if (!lua_isnoneornil(L, 2) && !lua_isboolean(L, 2)) {
      throw ArgumentError("m:zero_grad: set_to_none must be a boolean, got " +
                          std::string(luaL_typename(L, 2)));
    }
    module->zero_grad(lua_isnoneornil(L, 2) || lua_toboolean(L, 2));
    return 0;
  });
}

int m_num_parameters(lua_State* L) {
  return guarded(L, [&] {
    lua_pushnumber(L, static_cast<double>(
                          nn::count_parameters(*check_module(L, 1, "num_parameters").module())));
    return 1;
  });
}

int m_tostring(lua_State* L) {
  return guarded(L, [&] {
    const std::string s = nn::describe_tree(*check_module(L, 1, "tostring").module());
    lua_pushlstring(L, s.data(), s.size());
    return 1;
  });
}

int m_add(lua_State* L) {
  return guarded(L, [&] {
    auto& box = check_module(L, 1, "add");
    auto* seq = as_sequential(box);
    if (!seq) throw ArgumentError("add: only nn.Sequential has add()");
    seq->push_back(check_module(L, 2, "add").any);
    lua_settop(L, 1);
    return 1;
  });
}

int m_len(lua_State* L) {
  return guarded(L, [&] {
    auto& box = check_module(L, 1, "#");
    auto* seq = as_sequential(box);
    lua_pushnumber(L, seq ? static_cast<double>(seq->size()) : 0);
    return 1;
  });
}

// net(x): __call passes (net, x), exactly forward's arguments.
int module_call(lua_State* L) {
  return m_forward(L);
}

const Binding kModuleMethods[] = {{"forward", m_forward},
                                  {"parameters", m_parameters},
                                  {"named_parameter_lists", m_named_lists<false>},
                                  {"named_buffer_lists", m_named_lists<true>},
                                  {"named_children_lists", m_named_children_lists},
                                  {"state_dict", m_state_dict},
                                  {"load_state_dict", m_load_state_dict},
                                  {"train", m_train},
                                  {"eval", m_eval},
                                  {"is_training", m_is_training},
                                  {"to", m_to},
                                  {"zero_grad", m_zero_grad},
                                  {"num_parameters", m_num_parameters},
                                  {"add", m_add},
                                  {nullptr, nullptr}};
const luaL_Reg kModuleMeta[] = {{"__call", module_call},
                                {"__tostring", m_tostring},
                                {"__len", m_len},
                                {"__newindex", module_newindex},
                                {nullptr, nullptr}};

}  // namespace

// net[i] (1-based child of a Sequential), then methods.
int module_index(lua_State* L) {
  if (lua_type(L, 2) == LUA_TNUMBER) {
    return guarded(L, [&] {
      auto& box = check_module(L, 1, "index");
      auto* seq = as_sequential(box);
      if (!seq) throw ArgumentError("only nn.Sequential can be indexed by position");
      const int64_t i = check_integer(L, 2, "index");
      const int64_t n = static_cast<int64_t>(seq->size());
      if (i < 1 || i > n) {
        throw ArgumentError("nn.Sequential index " + std::to_string(i) + " is out of range 1.." +
                            std::to_string(n));
      }
      push_module(L, seq->at(static_cast<size_t>(i - 1)));
      return 1;
    });
  }
  lua_pushvalue(L, 2);
  lua_rawget(L, lua_upvalueindex(1));
  if (!lua_isnil(L, -1) || lua_type(L, 2) != LUA_TSTRING) return 1;
  return guarded(L, [&] {
    auto& module = *check_module(L, 1, "index").module();
    const std::string key = lua_tostring(L, 2);
    if (key == "training") {
      lua_pushboolean(L, module.is_training());
      return 1;
    }
    if (!push_layer_field(L, module, key))
      throw_missing_layer_field(L, module, key, lua_upvalueindex(1));
    return 1;
  });
}

const Binding* module_methods() {
  return kModuleMethods;
}

const luaL_Reg* module_metamethods() {
  return kModuleMeta;
}

}  // namespace engine::lua
