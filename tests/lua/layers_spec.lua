-- Every built-in layer and loss against PyTorch: tests/fixtures/layers.h5 (written by
-- tests/fixtures/generate_layers.py) holds PyTorch's weights, inputs, outputs and gradients;
-- each case builds the same layer here, loads the weights, runs forward and backward, and
-- compares. No expected value is typed in here.
local here = arg[0]:match('(.*/)')
package.path = here .. '?.lua;' .. package.path
local spec = require 'spec'
local torch, nn = require 'torch', require 'nn'

local fixtures = torch.load(here .. '../fixtures/layers.h5')
local unpack = table.unpack or unpack

-- name -> function() returning the layer (or loss), and optionally how to call it
local layers = {
  Linear = function() return nn.Linear(4, 3) end,
  Linear_nobias = function() return nn.Linear(4, 3, {bias = false}) end,
  Conv1d = function() return nn.Conv1d(2, 3, 3, {padding = 1}) end,
  Conv2d = function() return nn.Conv2d(2, 3, 3, {stride = 2, padding = 1}) end,
  Conv2d_groups = function() return nn.Conv2d(4, 4, 3, {groups = 2, bias = false}) end,
  Conv3d = function() return nn.Conv3d(2, 2, {2, 3, 3}) end,
  ConvTranspose2d = function() return nn.ConvTranspose2d(2, 3, 3, {stride = 2, padding = 1, output_padding = 1}) end,
  BatchNorm1d = function() return nn.BatchNorm1d(3) end,
  BatchNorm2d = function() return nn.BatchNorm2d(3) end,
  LayerNorm = function() return nn.LayerNorm({4}) end,
  GroupNorm = function() return nn.GroupNorm(2, 4) end,
  LocalResponseNorm = function() return nn.LocalResponseNorm(3, {alpha = 1e-2, beta = 0.75, k = 2}) end,
  Embedding = function() return nn.Embedding(5, 3) end,
  EmbeddingBag = function() return nn.EmbeddingBag(6, 3, {mode = 'sum'}) end,
  Bilinear = function() return nn.Bilinear(3, 4, 2) end,
  LSTM = function() return nn.LSTM(3, 4, {num_layers = 2, batch_first = true}) end,
  GRU = function() return nn.GRU(3, 4, {bidirectional = true}) end,
  MultiheadAttention = function()
    return nn.MultiheadAttention(8, 2, {batch_first = true}),
      function(m, x, mask) return m(x, x, x, {attn_mask = mask}) end
  end,
  TransformerEncoderLayer = function()
    return nn.TransformerEncoderLayer(8, 2, {dim_feedforward = 16, dropout = 0, batch_first = true})
  end,
  MaxPool2d = function() return nn.MaxPool2d(2) end,
  AvgPool2d = function() return nn.AvgPool2d(3, {stride = 2, padding = 1}) end,
  AdaptiveAvgPool2d = function() return nn.AdaptiveAvgPool2d({2, 3}) end,
  Flatten = function() return nn.Flatten() end,
  Unflatten = function() return nn.Unflatten(2, {2, 3}) end,
  ReLU = function() return nn.ReLU() end,
  GELU = function() return nn.GELU() end,
  SiLU = function() return nn.SiLU() end,
  Tanh = function() return nn.Tanh() end,
  Sigmoid = function() return nn.Sigmoid() end,
  LeakyReLU = function() return nn.LeakyReLU(0.2) end,
  Softmax = function() return nn.Softmax(2) end,
  LogSoftmax = function() return nn.LogSoftmax(2) end,
  MSELoss = function() return nn.MSELoss() end,
  L1Loss = function() return nn.L1Loss({reduction = 'sum'}) end,
  SmoothL1Loss = function() return nn.SmoothL1Loss({beta = 0.5}) end,
  BCEWithLogitsLoss = function(c) return nn.BCEWithLogitsLoss({pos_weight = c.state.pos_weight}) end,
  CrossEntropyLoss = function() return nn.CrossEntropyLoss({label_smoothing = 0.1}) end,
  NLLLoss = function() return nn.NLLLoss() end,
  Dropout = function() return nn.Dropout(0.4) end,
  Dropout1d = function() return nn.Dropout1d(0.5) end,
  Dropout1d_unbatched = function() return nn.Dropout1d(0.5) end,
  Dropout2d_NC = function() return nn.Dropout2d(0.5) end,
  Dropout2d_NCL = function() return nn.Dropout2d(0.5) end,
  Dropout2d = function() return nn.Dropout2d(0.5) end,
  Dropout3d = function() return nn.Dropout3d(0.5) end,
  Dropout3d_unbatched = function() return nn.Dropout3d(0.5) end,
  RNN = function() return nn.RNN(3, 4, {num_layers = 2, nonlinearity = 'relu'}) end,
  LSTMCell = function() return nn.LSTMCell(3, 4) end,
  GRUCell = function() return nn.GRUCell(3, 4) end,
  RNNCell = function() return nn.RNNCell(3, 4) end,
  ConvTranspose1d = function() return nn.ConvTranspose1d(2, 3, 3, {stride = 2}) end,
  PixelShuffle = function() return nn.PixelShuffle(2) end,
  Upsample_nearest = function() return nn.Upsample{scale_factor = 2} end,
  Upsample_bilinear = function()
    return nn.Upsample{size = {5, 7}, mode = 'bilinear', align_corners = false}
  end,
  ReflectionPad2d = function() return nn.ReflectionPad2d(1) end,
  InstanceNorm2d = function() return nn.InstanceNorm2d(3, {affine = true}) end,
  ReLU6 = function() return nn.ReLU6() end,
  SELU = function() return nn.SELU() end,
  Hardswish = function() return nn.Hardswish() end,
  Hardsigmoid = function() return nn.Hardsigmoid() end,
  Mish = function() return nn.Mish() end,
  Softsign = function() return nn.Softsign() end,
  LogSigmoid = function() return nn.LogSigmoid() end,
  ELU = function() return nn.ELU(0.5) end,
  Softplus = function() return nn.Softplus({beta = 2, threshold = 5}) end,
  PReLU = function() return nn.PReLU({num_parameters = 4, init = 0.1}) end,
  Hardtanh = function() return nn.Hardtanh(-0.5, 0.5) end,
  GLU = function() return nn.GLU(2) end,
  Softmin = function() return nn.Softmin(2) end,
  BCELoss = function(c) return nn.BCELoss({weight = c.state.weight}) end,
  KLDivLoss = function() return nn.KLDivLoss({reduction = 'batchmean'}) end,
  HuberLoss = function() return nn.HuberLoss({delta = 0.5}) end,
  TransformerEncoder = function()
    local layer = nn.TransformerEncoderLayer(8, 2, {dim_feedforward = 16, dropout = 0})
    return nn.TransformerEncoder(layer, 2, {norm = nn.LayerNorm({8})}),
      function(m, x, allowed) return m(x, {mask = allowed:logical_not()}) end
  end,
  TransformerDecoderLayer = function()
    return nn.TransformerDecoderLayer(8, 2, {dim_feedforward = 16, dropout = 0, batch_first = true})
  end,
  TransformerDecoder = function()
    local layer = nn.TransformerDecoderLayer(8, 2, {dim_feedforward = 16, dropout = 0})
    return nn.TransformerDecoder(layer, 2)
  end,
  CELU = function() return nn.CELU(0.5) end,
  Threshold = function() return nn.Threshold(0.1, 20) end,
  Tanhshrink = function() return nn.Tanhshrink() end,
  InstanceNorm1d = function() return nn.InstanceNorm1d(3) end,
  InstanceNorm3d = function() return nn.InstanceNorm3d(2, {affine = true}) end,
  ConstantPad1d = function() return nn.ConstantPad1d({1, 2}, 0.5) end,
  ConstantPad2d = function() return nn.ConstantPad2d(1, 3) end,
  ReplicationPad1d = function() return nn.ReplicationPad1d({2, 1}) end,
  ReplicationPad2d = function() return nn.ReplicationPad2d({1, 0, 2, 1}) end,
  ReflectionPad1d = function() return nn.ReflectionPad1d(2) end,
  ZeroPad2d = function() return nn.ZeroPad2d({1, 2, 0, 1}) end,
  MaxPool1d = function() return nn.MaxPool1d(3, {stride = 2, padding = 1}) end,
  AvgPool1d = function() return nn.AvgPool1d(3, {stride = 2}) end,
  AdaptiveAvgPool1d = function() return nn.AdaptiveAvgPool1d(4) end,
  AdaptiveMaxPool2d = function() return nn.AdaptiveMaxPool2d({2, 3}) end,
  PixelUnshuffle = function() return nn.PixelUnshuffle(2) end,
  ConvTranspose3d = function() return nn.ConvTranspose3d(2, 2, 2, {stride = 2}) end,
  Transformer = function()
    return nn.Transformer{d_model = 8, nhead = 2, num_encoder_layers = 2, num_decoder_layers = 1,
                          dim_feedforward = 16, dropout = 0},
      function(m, s, t)
        return m(s, t, {tgt_mask = nn.Transformer.generate_square_subsequent_mask(4)})
      end
  end,
}

local function is_loss(name) return name:match('Loss$') ~= nil end

local function close(name, what, actual, expected)
  if not torch.is_tensor(actual) then error(('%s: no %s computed'):format(name, what), 0) end
  spec.same_list(actual:size(), expected:size(), name .. ' ' .. what .. ' size')
  local a, e = actual:detach():double(), expected:double()
  local bound = e:abs() * 1e-5 + 1e-5
  if not (a - e):abs():le(bound):all():item() then
    error(('%s: %s differs from PyTorch by %g'):format(name, what, (a - e):abs():max():item()), 0)
  end
end

-- Outputs flattened in PyTorch's order: LSTM's (out, {h, c}) gives out, h, c.
local function flatten(results)
  local flat = {}
  for _, r in ipairs(results) do
    if torch.is_tensor(r) then
      flat[#flat + 1] = r
    elseif type(r) == 'table' then
      for _, t in ipairs(r) do flat[#flat + 1] = t end
    end
  end
  return flat
end

spec.describe('layers and losses against PyTorch', function()
  for _, name in ipairs(spec.sorted_keys(fixtures)) do
    spec.it(name, function()
      local c = fixtures[name]
      if not layers[name] then error('fixture ' .. name .. ' has no Lua counterpart', 0) end
      local layer, call = layers[name](c)
      if not is_loss(name) then layer:load_state_dict(c.state) end
      local inputs = {}
      for i = 1, 4 do
        local x = c['x' .. i]
        if x then
          x = x:clone()
          if x:dtype() == 'float32' then x:requires_grad() end
          inputs[i] = x
        end
      end
      local n = 0
      for i = 1, 4 do if inputs[i] then n = i end end
      if c.seed then torch.manual_seed(c.seed:item()) end  -- random layers: PyTorch's draw
      local results = {(call or function(m, ...) return m(...) end)(layer, unpack(inputs, 1, n))}
      local outputs = flatten(results)
      local total
      for i, out in ipairs(outputs) do
        close(name, 'output ' .. i, out, c['out' .. i])
        if out:dtype() == 'float32' then total = total and total + out:sum() or out:sum() end
      end
      if c['out' .. (#outputs + 1)] then error(name .. ': PyTorch returns more outputs', 0) end
      total:backward()
      for key, expected in pairs(c.grad) do
        local index = key:match('^x(%d)$')
        local got
        if index then
          got = inputs[tonumber(index)].grad
        else
          for pname, p in layer:named_parameters() do
            if pname == key then got = p.grad end
          end
        end
        close(name, 'gradient of ' .. key, got, expected)
      end
    end)
  end
  spec.it('every Lua case has a fixture', function()
    for name in pairs(layers) do
      if not fixtures[name] then error(name .. ' has no fixture: rerun the generator', 0) end
    end
  end)
end)

spec.finish()
