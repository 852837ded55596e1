// Part of require 'nn.core': a built-in layer's attributes as PyTorch's: its own parameters and
// buffers (lin.weight, lin.bias, bn.running_mean; nil for a slot left empty, PyTorch's None),
// its children by name (layer.self_attn), the options it was built with (lin.in_features), and
// assigning a parameter or buffer (decoder.weight = encoder.weight ties the two layers to one
// tensor). Any other name is an error naming it.
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/modules/rnn.h>
#include <torch/nn/modules/transformercoder.h>

#include <functional>
#include <optional>
#include <variant>

#include "engine/lua/nn/nn_tables.hpp"
#include "engine/lua/surface/missing_names.hpp"
#include "engine/nn/batchnorm.hpp"
#include "engine/nn/parameter_slots.hpp"

namespace engine::lua {
namespace {

using Field = std::function<void(lua_State*)>;
using Fields = std::vector<std::pair<const char*, Field>>;

Field number(double v) {
  return [v](lua_State* L) { lua_pushnumber(L, v); };
}
Field boolean(bool v) {
  return [v](lua_State* L) { lua_pushboolean(L, v); };
}
Field list(std::vector<int64_t> values) {
  return [values](lua_State* L) { push_shape(L, values); };
}

template <size_t D, class Impl>
Fields conv_fields(const Impl& conv) {
  const auto& o = conv.options;
  auto as_list = [](const torch::ExpandingArray<D>& a) {
    return std::vector<int64_t>(a->begin(), a->end());
  };
  std::vector<int64_t> padding;
  // c10::variant in libtorch 1.13, std::variant later: argument-dependent lookup finds the
  // get_if of either
  using std::get_if;
  if (const auto* p = get_if<torch::ExpandingArray<D>>(&o.padding())) padding = as_list(*p);
  return {{"in_channels", number(static_cast<double>(o.in_channels()))},
          {"out_channels", number(static_cast<double>(o.out_channels()))},
          {"kernel_size", list(as_list(o.kernel_size()))},
          {"stride", list(as_list(o.stride()))},
          {"padding", list(padding)},
          {"dilation", list(as_list(o.dilation()))},
          {"groups", number(static_cast<double>(o.groups()))}};
}

template <class Rnn>
Fields rnn_fields(const Rnn& rnn) {
  const auto& o = rnn.options_base;
  return {{"input_size", number(static_cast<double>(o.input_size()))},
          {"hidden_size", number(static_cast<double>(o.hidden_size()))},
          {"num_layers", number(static_cast<double>(o.num_layers()))},
          {"bias", boolean(o.bias())},
          {"batch_first", boolean(o.batch_first())},
          {"dropout", number(o.dropout())},
          {"bidirectional", boolean(o.bidirectional())}};
}

template <class Cell>
Fields cell_fields(const Cell& cell) {
  const auto& o = cell.options_base;
  return {{"input_size", number(static_cast<double>(o.input_size()))},
          {"hidden_size", number(static_cast<double>(o.hidden_size()))}};
}

// The options a layer was built with, under PyTorch's attribute names (positions 1-based).
Fields option_fields(torch::nn::Module& m) {
  using namespace torch::nn;
  if (auto* l = dynamic_cast<LinearImpl*>(&m)) {
    return {{"in_features", number(static_cast<double>(l->options.in_features()))},
            {"out_features", number(static_cast<double>(l->options.out_features()))}};
  }
  if (auto* c = dynamic_cast<Conv1dImpl*>(&m)) return conv_fields<1>(*c);
  if (auto* c = dynamic_cast<Conv2dImpl*>(&m)) return conv_fields<2>(*c);
  if (auto* c = dynamic_cast<Conv3dImpl*>(&m)) return conv_fields<3>(*c);
  if (auto* e = dynamic_cast<EmbeddingImpl*>(&m)) {
    Fields out = {{"num_embeddings", number(static_cast<double>(e->options.num_embeddings()))},
                  {"embedding_dim", number(static_cast<double>(e->options.embedding_dim()))}};
    if (e->options.padding_idx()) {
      out.emplace_back("padding_idx", number(static_cast<double>(*e->options.padding_idx() + 1)));
    }
    return out;
  }
  if (auto* b = dynamic_cast<nn::BatchNormImpl*>(&m)) {
    return {{"num_features", number(static_cast<double>(b->options.num_features()))},
            {"eps", number(b->options.eps())},
            {"momentum", number(b->options.momentum().value_or(0))},
            {"affine", boolean(b->options.affine())},
            {"track_running_stats", boolean(b->options.track_running_stats())}};
  }
  if (auto* n = dynamic_cast<LayerNormImpl*>(&m)) {
    return {{"normalized_shape", list(n->options.normalized_shape())},
            {"eps", number(n->options.eps())}};
  }
  if (auto* d = dynamic_cast<DropoutImpl*>(&m)) return {{"p", number(d->options.p())}};
  if (auto* d = dynamic_cast<Dropout2dImpl*>(&m)) return {{"p", number(d->options.p())}};
  if (auto* d = dynamic_cast<Dropout3dImpl*>(&m)) return {{"p", number(d->options.p())}};
  if (auto* r = dynamic_cast<LSTMImpl*>(&m)) return rnn_fields(*r);
  if (auto* r = dynamic_cast<GRUImpl*>(&m)) return rnn_fields(*r);
  if (auto* r = dynamic_cast<RNNImpl*>(&m)) return rnn_fields(*r);
  if (auto* c = dynamic_cast<LSTMCellImpl*>(&m)) return cell_fields(*c);
  if (auto* c = dynamic_cast<GRUCellImpl*>(&m)) return cell_fields(*c);
  if (auto* c = dynamic_cast<RNNCellImpl*>(&m)) return cell_fields(*c);
  if (auto* a = dynamic_cast<MultiheadAttentionImpl*>(&m)) {
    return {{"embed_dim", number(static_cast<double>(a->options.embed_dim()))},
            {"num_heads", number(static_cast<double>(a->options.num_heads()))}};
  }
  return {};
}

std::string layer_name(torch::nn::Module& m) {
  std::string s = nn::describe_layer(m);
  return s.substr(0, s.find('('));
}

}  // namespace

std::optional<torch::nn::AnyModule> callable_child(const std::shared_ptr<torch::nn::Module>& m) {
  using namespace torch::nn;
  if (auto l = std::dynamic_pointer_cast<LinearImpl>(m)) return AnyModule(l);
  if (auto n = std::dynamic_pointer_cast<LayerNormImpl>(m)) return AnyModule(n);
  if (auto d = std::dynamic_pointer_cast<DropoutImpl>(m)) return AnyModule(d);
  if (auto a = std::dynamic_pointer_cast<nn::MultiheadAttentionImpl>(m)) return AnyModule(a);
  if (auto a = std::dynamic_pointer_cast<MultiheadAttentionImpl>(m)) return AnyModule(a);
  if (auto e = std::dynamic_pointer_cast<TransformerEncoderImpl>(m)) return AnyModule(e);
  if (auto d = std::dynamic_pointer_cast<TransformerDecoderImpl>(m)) return AnyModule(d);
  return std::nullopt;
}

bool push_layer_field(lua_State* L, torch::nn::Module& module, const std::string& key) {
  if (auto p = nn::own_parameter(module, key)) {
    if (p->defined()) {
      push_parameter(L, *p);
    } else {
      lua_pushnil(L);  // an empty slot: PyTorch's None (a Linear without bias)
    }
    return true;
  }
  if (auto b = nn::own_buffer(module, key)) {
    if (b->defined()) {
      push_tensor(L, *b);
    } else {
      lua_pushnil(L);
    }
    return true;
  }
  for (const auto& child : module.named_children()) {
    if (child.key() != key) continue;
    auto callable = callable_child(child.value());
    if (!callable) {
      throw ArgumentError("'" + key + "' of " + layer_name(module) + " is a " +
                          nn::describe_layer(*child.value()) +
                          ", which the engine does not hand to scripts");
    }
    push_module(L, *callable);
    return true;
  }
  for (const auto& [name, push] : option_fields(module)) {
    if (key == name) {
      push(L);
      return true;
    }
  }
  return false;
}

[[noreturn]] void throw_missing_layer_field(lua_State* L, torch::nn::Module& module,
                                            const std::string& key, int methods) {
  auto known = table_keys(L, methods);
  for (const auto& name : nn::own_tensor_names(module)) known.push_back(name);
  for (const auto& child : module.named_children()) known.push_back(child.key());
  for (const auto& [name, push] : option_fields(module)) known.emplace_back(name);
  std::string message = missing_name_message("Module", key, known, "m.");
  message.replace(0, std::string("Module").size(), layer_name(module));
  throw ArgumentError(message);
}

// m.name = tensor (or nil for a parameter slot): PyTorch's assignment of a parameter or buffer.
int module_newindex(lua_State* L) {
  return guarded(L, [&] {
    auto& box = check_module(L, 1, "assignment");
    auto& module = *box.module();
    if (lua_type(L, 2) != LUA_TSTRING) {
      throw ArgumentError("a layer's fields are set by name (m.weight = t), got a " +
                          type_name(L, 2) + " key");
    }
    const std::string key = lua_tostring(L, 2);
    const bool slot = nn::own_parameter(module, key) || nn::own_buffer(module, key);
    if (!slot) {
      const auto names = nn::own_tensor_names(module);
      throw ArgumentError(
          "cannot set field '" + key + "' of " + layer_name(module) +
          ": a built-in layer's settable fields are its parameters and buffers" +
          (names.empty() ? std::string(" (it has none)") : " (" + core::join(names) + ")") +
          "; keep other values in a module of your own (nn.Module:extend)");
    }
    torch::Tensor value;
    if (!lua_isnil(L, 3)) {
      value = check_tensor(L, 3, ("m." + key + " =").c_str());
      if (!value.is_leaf()) {
        throw ArgumentError("m." + key + " = t: t was computed from other tensors (it has a " +
                            "gradient history); a parameter must be a leaf: nn.Parameter(t) or " +
                            "t:detach()");
      }
    }
    nn::replace_own_tensor(module, key, value);
    return 0;
  });
}

}  // namespace engine::lua
