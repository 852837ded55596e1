// Part of require 'nn.core': nn.RNN and the recurrent cells (LSTMCell, GRUCell, RNNCell), with
// PyTorch's arguments, and their forward from Lua, which takes and returns states:
// rnn(x[, h]) -> output, h; lstm_cell(x[, {h, c}]) -> h, c; gru_cell(x[, h]) -> h.
#include <torch/nn/modules/rnn.h>

#include "engine/lua/nn/nn_tables.hpp"

namespace engine::lua {
namespace {

namespace tnn = torch::nn;

// 'tanh' or 'relu'
template <class Opts>
void set_nonlinearity(Opts& opts, const std::string& name, const char* function) {
  if (name == "tanh") {
    opts.nonlinearity(torch::kTanh);
  } else if (name == "relu") {
    opts.nonlinearity(torch::kReLU);
  } else {
    throw ArgumentError(std::string(function) + ": nonlinearity must be 'tanh' or 'relu', got '" +
                        name + "'");
  }
}

// nn.RNN(input_size, hidden_size[, {num_layers, nonlinearity, bias, batch_first, dropout,
// bidirectional}])
int l_rnn(lua_State* L) {
  const char* name = "nn.RNN";
  return guarded(L, [&] {
    const int64_t in = check_integer(L, 1, name), hidden = check_integer(L, 2, name);
    Options o(L, 3, name,
              {"num_layers", "nonlinearity", "bias", "batch_first", "dropout", "bidirectional"});
    tnn::RNNOptions opts(in, hidden);
    opts.num_layers(o.integer("num_layers", 1))
        .bias(o.boolean("bias", true))
        .batch_first(o.boolean("batch_first", false))
        .dropout(o.number("dropout", 0.0))
        .bidirectional(o.boolean("bidirectional", false));
    set_nonlinearity(opts, o.string("nonlinearity", "tanh"), name);
    return push_layer<tnn::RNNImpl>(L, opts);
  });
}

// nn.LSTMCell / nn.GRUCell(input_size, hidden_size[, {bias}])
template <class Impl, class Opts>
int cell_layer(lua_State* L, const char* name) {
  return guarded(L, [&] {
    const int64_t in = check_integer(L, 1, name), hidden = check_integer(L, 2, name);
    Options o(L, 3, name, {"bias"});
    return push_layer<Impl>(L, Opts(in, hidden).bias(o.boolean("bias", true)));
  });
}
int l_lstm_cell(lua_State* L) {
  return cell_layer<tnn::LSTMCellImpl, tnn::LSTMCellOptions>(L, "nn.LSTMCell");
}
int l_gru_cell(lua_State* L) {
  return cell_layer<tnn::GRUCellImpl, tnn::GRUCellOptions>(L, "nn.GRUCell");
}

int l_rnn_cell(lua_State* L) {
  const char* name = "nn.RNNCell";
  return guarded(L, [&] {
    const int64_t in = check_integer(L, 1, name), hidden = check_integer(L, 2, name);
    Options o(L, 3, name, {"bias", "nonlinearity"});
    tnn::RNNCellOptions opts(in, hidden);
    opts.bias(o.boolean("bias", true));
    set_nonlinearity(opts, o.string("nonlinearity", "tanh"), name);
    return push_layer<tnn::RNNCellImpl>(L, opts);
  });
}

torch::Tensor optional_state(lua_State* L, int index) {
  return lua_isnoneornil(L, index) ? torch::Tensor() : check_tensor(L, index, "forward");
}

// {h, c} at index 3 (nil: zeros, as PyTorch's None)
c10::optional<std::tuple<torch::Tensor, torch::Tensor>> lstm_cell_state(lua_State* L) {
  if (lua_isnoneornil(L, 3)) return c10::nullopt;
  if (!lua_istable(L, 3)) {
    throw ArgumentError("bad argument #3 to 'forward' (LSTMCell state {h, c} expected, got " +
                        type_name(L, 3) + ")");
  }
  torch::Tensor hc[2];
  for (int i = 0; i < 2; ++i) {
    lua_rawgeti(L, 3, i + 1);
    auto* t = test_tensor(L, -1);
    lua_pop(L, 1);
    if (!t) {
      throw ArgumentError("bad argument #3 to 'forward' (LSTMCell state {h, c}: element " +
                          std::to_string(i + 1) + " is not a Tensor)");
    }
    hc[i] = *t;
  }
  return std::make_tuple(hc[0], hc[1]);
}

const Binding kRecurrentLayers[] = {{"RNN", l_rnn},
                                    {"LSTMCell", l_lstm_cell, "",
                                     "cell(x[, {h, c}]) returns h, c (PyTorch's tuple as two "
                                     "values)"},
                                    {"GRUCell", l_gru_cell},
                                    {"RNNCell", l_rnn_cell},
                                    {nullptr, nullptr}};

}  // namespace

int forward_recurrent(lua_State* L, torch::nn::Module* module) {
  if (auto* rnn = dynamic_cast<tnn::RNNImpl*>(module)) {
    auto [out, h] = rnn->forward(check_tensor(L, 2, "forward"), optional_state(L, 3));
    push_tensor(L, out);
    push_tensor(L, h);
    return 2;
  }
  if (auto* cell = dynamic_cast<tnn::LSTMCellImpl*>(module)) {
    auto [h, c] = cell->forward(check_tensor(L, 2, "forward"), lstm_cell_state(L));
    push_tensor(L, h);
    push_tensor(L, c);
    return 2;
  }
  if (auto* cell = dynamic_cast<tnn::GRUCellImpl*>(module)) {
    push_tensor(L, cell->forward(check_tensor(L, 2, "forward"), optional_state(L, 3)));
    return 1;
  }
  if (auto* cell = dynamic_cast<tnn::RNNCellImpl*>(module)) {
    push_tensor(L, cell->forward(check_tensor(L, 2, "forward"), optional_state(L, 3)));
    return 1;
  }
  return -1;
}

const Binding* recurrent_layer_functions() {
  return kRecurrentLayers;
}

}  // namespace engine::lua
