// Part of require 'nn.core': PyTorch's transformer layers and stacks (engine/nn/layers.hpp,
// engine/nn/transformer.hpp): nn.TransformerEncoderLayer(d, heads[, opts]),
// nn.TransformerEncoder(layer, n[, {norm}]), nn.TransformerDecoderLayer(d, heads[, opts]),
// nn.TransformerDecoder(layer, n[, {norm}]), nn.Transformer{...}, and their forward from Lua with
// PyTorch's keyword masks in an options table.
#include "engine/lua/nn/nn_tables.hpp"
#include "engine/nn/layers.hpp"
#include "engine/nn/transformer.hpp"

namespace engine::lua {
namespace {

namespace tnn = torch::nn;

torch::nn::activation_t activation_of(const std::string& name, const char* function) {
  if (name == "relu") return torch::kReLU;
  if (name == "gelu") return torch::kGELU;
  throw ArgumentError(std::string(function) + ": activation must be 'relu' or 'gelu'");
}

// The optional norm module of a stack, from {norm = module} at index.
tnn::AnyModule norm_option(lua_State* L, int index, const char* function) {
  Options o(L, index, function, {"norm"});
  if (!o.has("norm")) return {};
  o.push_field("norm");
  auto& norm = check_module(L, lua_gettop(L), function);
  auto any = norm.any;
  lua_pop(L, 1);
  return any;
}

int l_transformer_encoder(lua_State* L) {
  const char* name = "nn.TransformerEncoder";
  return guarded(L, [&] {
    auto layer = std::dynamic_pointer_cast<nn::TransformerEncoderLayerImpl>(
        check_module(L, 1, name).module());
    if (!layer)
      throw ArgumentError(std::string(name) + ": argument 1 must be an nn.TransformerEncoderLayer");
    tnn::TransformerEncoderOptions opts(
        tnn::TransformerEncoderLayer(
            std::static_pointer_cast<tnn::TransformerEncoderLayerImpl>(layer)),
        check_integer(L, 2, name));
    opts.norm(norm_option(L, 3, name));
    push_module(L, tnn::AnyModule(nn::make_transformer_encoder(opts, layer->batch_first())));
    return 1;
  });
}

// nn.TransformerEncoderLayer / nn.TransformerDecoderLayer(d_model, nhead[, {dim_feedforward,
// dropout, activation, batch_first}]); norm_first is refused (libtorch 1.13's layers lack it)
template <class Impl, class Opts>
int transformer_layer(lua_State* L, const char* name) {
  return guarded(L, [&] {
    const int64_t dim = check_integer(L, 1, name), heads = check_integer(L, 2, name);
    Options o(L, 3, name,
              {"dim_feedforward", "dropout", "activation", "batch_first", "norm_first"});
    if (o.boolean("norm_first", false)) {
      throw ArgumentError(std::string(name) +
                          ": norm_first = true is not available in libtorch 1.13's C++ layer");
    }
    auto opts = Opts(dim, heads)
                    .dim_feedforward(o.integer("dim_feedforward", 2048))
                    .dropout(o.number("dropout", 0.1))
                    .activation(activation_of(o.string("activation", "relu"), name));
    return push_layer<Impl>(L, opts, o.boolean("batch_first", false));
  });
}
int l_transformer_encoder_layer(lua_State* L) {
  return transformer_layer<nn::TransformerEncoderLayerImpl, tnn::TransformerEncoderLayerOptions>(
      L, "nn.TransformerEncoderLayer");
}
int l_transformer_decoder_layer(lua_State* L) {
  return transformer_layer<nn::TransformerDecoderLayerImpl, tnn::TransformerDecoderLayerOptions>(
      L, "nn.TransformerDecoderLayer");
}

int l_transformer_decoder(lua_State* L) {
  const char* name = "nn.TransformerDecoder";
  return guarded(L, [&] {
    auto layer = std::dynamic_pointer_cast<nn::TransformerDecoderLayerImpl>(
        check_module(L, 1, name).module());
    if (!layer)
      throw ArgumentError(std::string(name) + ": argument 1 must be an nn.TransformerDecoderLayer");
    tnn::TransformerDecoderOptions opts(
        tnn::TransformerDecoderLayer(
            std::static_pointer_cast<tnn::TransformerDecoderLayerImpl>(layer)),
        check_integer(L, 2, name));
    opts.norm(norm_option(L, 3, name));
    push_module(L, tnn::AnyModule(nn::make_transformer_decoder(opts, layer->batch_first())));
    return 1;
  });
}

// nn.Transformer{d_model = 512, nhead = 8, num_encoder_layers = 6, num_decoder_layers = 6,
// dim_feedforward = 2048, dropout = 0.1, activation = 'relu', batch_first = false}
int l_transformer(lua_State* L) {
  const char* name = "nn.Transformer";
  return guarded(L, [&] {
    Options o(L, 1, name,
              {"d_model", "nhead", "num_encoder_layers", "num_decoder_layers", "dim_feedforward",
               "dropout", "activation", "batch_first", "norm_first"});
    if (o.boolean("norm_first", false)) {
      throw ArgumentError(std::string(name) +
                          ": norm_first = true is not available in libtorch 1.13's C++ layers");
    }
    auto opts = tnn::TransformerOptions(o.integer("d_model", 512), o.integer("nhead", 8))
                    .num_encoder_layers(o.integer("num_encoder_layers", 6))
                    .num_decoder_layers(o.integer("num_decoder_layers", 6))
                    .dim_feedforward(o.integer("dim_feedforward", 2048))
                    .dropout(o.number("dropout", 0.1))
                    .activation(activation_of(o.string("activation", "relu"), name));
    push_module(L, tnn::AnyModule(nn::make_transformer(opts, o.boolean("batch_first", false))));
    return 1;
  });
}

// The masks of an options table at index, with the keys PyTorch's forward takes.
nn::TransformerMasks masks_at(lua_State* L, int index, const char* function,
                              std::vector<const char*> keys) {
  Options o(L, index, function, keys);
  nn::TransformerMasks m;
  auto get = [&](const char* key) { return tensor_option(L, index, key, function); };
  for (const char* key : keys) {
    const std::string k = key;
    if (k == "mask" || k == "src_mask") m.src = get(key);
    if (k == "tgt_mask") m.tgt = get(key);
    if (k == "memory_mask") m.memory = get(key);
    if (k == "src_key_padding_mask") m.src_key_padding = get(key);
    if (k == "tgt_key_padding_mask") m.tgt_key_padding = get(key);
    if (k == "memory_key_padding_mask") m.memory_key_padding = get(key);
  }
  return m;
}

// nn.Transformer.generate_square_subsequent_mask(n): PyTorch's causal mask, -inf above the
// diagonal, 0 elsewhere
int t_square_subsequent_mask(lua_State* L) {
  return guarded(L, [&] {
    const int64_t n = check_integer(L, 1, "generate_square_subsequent_mask");
    push_tensor(L, tnn::TransformerImpl::generate_square_subsequent_mask(n));
    return 1;
  });
}

const Binding kTransformerLayers[] = {
    {"TransformerEncoderLayer", l_transformer_encoder_layer, "",
     "layer(src[, {src_mask, src_key_padding_mask}]); norm_first is refused (libtorch 1.13 lacks "
     "it)"},
    {"TransformerEncoder", l_transformer_encoder, "",
     "enc(x[, {mask, src_key_padding_mask}]); the layer's weights are copied num_layers times, "
     "as PyTorch's deepcopy"},
    {"TransformerDecoderLayer", l_transformer_decoder_layer, "",
     "layer(tgt, memory[, {tgt_mask, memory_mask, tgt_key_padding_mask, "
     "memory_key_padding_mask}]); norm_first is refused (libtorch 1.13 lacks it)"},
    {"TransformerDecoder", l_transformer_decoder},
    {"Transformer", l_transformer, "",
     "one options table: nn.Transformer{d_model = 512, nhead = 8, ...}; t(src, tgt[, {masks}]); "
     "t.encoder and t.decoder are libtorch's own, sequence first"},
    {nullptr, nullptr}};

const char* const kEncoderMasks[] = {"mask", "src_key_padding_mask"};

}  // namespace

int forward_transformer(lua_State* L, torch::nn::Module* module) {
  const std::vector<const char*> decoder_keys = {"tgt_mask", "memory_mask", "tgt_key_padding_mask",
                                                 "memory_key_padding_mask"};
  if (auto* t = dynamic_cast<nn::TransformerImpl*>(module)) {
    push_tensor(L,
                t->forward(check_tensor(L, 2, "forward"), check_tensor(L, 3, "forward"),
                           masks_at(L, 4, "nn.Transformer",
                                    {"src_mask", "tgt_mask", "memory_mask", "src_key_padding_mask",
                                     "tgt_key_padding_mask", "memory_key_padding_mask"})));
    return 1;
  }
  if (auto* d = dynamic_cast<nn::TransformerDecoderImpl*>(module)) {
    push_tensor(L, d->forward(check_tensor(L, 2, "forward"), check_tensor(L, 3, "forward"),
                              masks_at(L, 4, "nn.TransformerDecoder", decoder_keys)));
    return 1;
  }
  if (auto* d = dynamic_cast<nn::TransformerDecoderLayerImpl*>(module)) {
    push_tensor(L, d->forward(check_tensor(L, 2, "forward"), check_tensor(L, 3, "forward"),
                              masks_at(L, 4, "nn.TransformerDecoderLayer", decoder_keys)));
    return 1;
  }
  const std::vector<const char*> encoder_keys(std::begin(kEncoderMasks), std::end(kEncoderMasks));
  if (auto* e = dynamic_cast<nn::TransformerEncoderImpl*>(module)) {
    push_tensor(L, e->forward(check_tensor(L, 2, "forward"),
                              masks_at(L, 3, "nn.TransformerEncoder", encoder_keys)));
    return 1;
  }
  if (auto* e = dynamic_cast<tnn::TransformerEncoderImpl*>(module)) {  // a Transformer's own
    push_tensor(L, nn::encoder_forward(*e, check_tensor(L, 2, "forward"),
                                       masks_at(L, 3, "TransformerEncoder", encoder_keys)));
    return 1;
  }
  return -1;
}

const Binding* transformer_layer_functions() {
  return kTransformerLayers;
}

int push_square_subsequent_mask_function(lua_State* L) {
  lua_pushcfunction(L, t_square_subsequent_mask);
  return 1;
}

}  // namespace engine::lua
