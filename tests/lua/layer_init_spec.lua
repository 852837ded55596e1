-- Layers built after torch.manual_seed start from PyTorch's weights, and leave torch's generator
-- where PyTorch's constructors leave it: tests/fixtures/layer_init.h5 (written by
-- tests/fixtures/generate_layer_init.py) holds, per case, the state_dict PyTorch's constructor
-- gave and the numbers torch.rand(4) draws next. Nothing expected is typed in here.
local here = arg[0]:match('(.*/)')
package.path = here .. '?.lua;' .. package.path
local spec = require 'spec'
local torch, nn = require 'torch', require 'nn'

local fixtures = torch.load(here .. '../fixtures/layer_init.h5')

local builders = {
  Linear = function() return nn.Linear(5, 3) end,
  Embedding = function() return nn.Embedding(7, 4) end,
  Conv2d = function() return nn.Conv2d(2, 3, 3) end,
  LSTM = function() return nn.LSTM(4, 5, {num_layers = 2, dropout = 0.2}) end,
  GRU = function() return nn.GRU(4, 5, {num_layers = 2}) end,
  RNN_relu = function() return nn.RNN(4, 5, {num_layers = 2, nonlinearity = 'relu'}) end,
  LSTMCell = function() return nn.LSTMCell(3, 4) end,
  MultiheadAttention = function() return nn.MultiheadAttention(8, 2) end,
  TransformerEncoderLayer = function()
    return nn.TransformerEncoderLayer(8, 2, {dim_feedforward = 16})
  end,
  TransformerEncoder = function()
    return nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, {dim_feedforward = 16}), 3)
  end,
  TransformerDecoder = function()
    return nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, {dim_feedforward = 16}), 2,
                                 {norm = nn.LayerNorm({8})})
  end,
  Transformer = function()
    return nn.Transformer{d_model = 8, nhead = 2, dim_feedforward = 16, num_encoder_layers = 2}
  end,
}

spec.describe('layers initialised as PyTorch initialises them', function()
  for _, name in ipairs(spec.sorted_keys(fixtures)) do
    spec.it(name, function()
      local c = fixtures[name]
      if not builders[name] then error('fixture ' .. name .. ' has no Lua counterpart', 0) end
      torch.manual_seed(c.seed:item())
      local state = builders[name]():state_dict()
      local after = torch.rand(4)
      for key, expected in pairs(c.state) do
        local got = state[key]
        if not got then error(name .. ': no ' .. key .. ' in the engine layer', 0) end
        if not torch.equal(got, expected) then
          error(name .. ': ' .. key .. ' differs from PyTorch\'s initial value', 0)
        end
      end
      for key in pairs(state) do
        if not c.state[key] then error(name .. ': ' .. key .. ' is not in PyTorch\'s layer', 0) end
      end
      if not torch.equal(after, c.after) then
        error(name .. ': torch.rand after construction differs: the constructor drew ' ..
              'other numbers than PyTorch\'s', 0)
      end
    end)
  end
  spec.it('every Lua case has a fixture', function()
    for name in pairs(builders) do
      if not fixtures[name] then error(name .. ' has no fixture: rerun the generator', 0) end
    end
  end)
end)

spec.finish()
