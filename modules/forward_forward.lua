-- pytorch/examples' mnist_forward_forward (Hinton's forward-forward algorithm): layers trained one
-- after another, each by its own Adam, to give positive data (an image with its true label
-- written into its first 10 pixels) a high "goodness" (mean squared activation) and negative
-- data (a wrong label) a low one; a digit is classified by the label of highest total goodness.
local torch, nn = require 'torch', require 'nn'

local M = {}

-- x with its first `classes` values zeroed and, in each row, the value at its label (1-based
-- class y, a tensor of classes or one number for every row) set to x's maximum
function M.overlay_y_on_x(x, y, classes)
  classes = classes or 10
  local x_ = x:clone()
  x_:narrow(2, 1, classes):mul_(0.0)
  if type(y) == 'number' then y = torch.full({x:size(1)}, y, {dtype = 'int64', device = x:device()}) end
  return x_:scatter_(2, y:view(-1, 1), x:max():item())
end

-- PyTorch's class Layer(nn.Linear): a linear layer on the input's direction, then ReLU
local Layer = nn.Linear:extend('FFLayer')
M.Layer = Layer

function Layer:init(in_features, out_features)
  nn.Linear.init(self, in_features, out_features)
  self.relu = nn.ReLU()
end

function Layer:forward(x)
  local x_direction = x / (x:norm(2, 2, {keepdim = true}) + 1e-4)
  return self.relu(torch.mm(x_direction, self.weight.T) + self.bias:unsqueeze(1))
end

-- log(1 + exp(.)) of the positive data's goodness below the threshold and the negative data's
-- above it, averaged
function Layer:loss(x_pos, x_neg, threshold)
  local g_pos = self(x_pos):pow(2):mean(2)
  local g_neg = self(x_neg):pow(2):mean(2)
  return torch.log1p(torch.exp(torch.cat({-g_pos + threshold, g_neg - threshold}))):mean()
end

local Net = nn.Module:extend('ForwardForwardNet')
M.Net = Net

function Net:init(dims)
  self.layers = nn.ModuleList()
  for d = 1, #dims - 1 do self.layers:append(Layer(dims[d], dims[d + 1])) end
end

-- the 1-based label whose overlay gives the most goodness summed over the layers, per row
function Net:predict(x)
  local goodness_per_label = {}
  for label = 1, 10 do
    local h = M.overlay_y_on_x(x, label)
    local goodness = 0
    for _, layer in ipairs(self.layers) do
      h = layer(h)
      goodness = goodness + h:pow(2):mean(2)
    end
    goodness_per_label[label] = goodness:unsqueeze(2)
  end
  return torch.cat(goodness_per_label, 2):argmax(2)
end

-- For every row of labels y, a wrong label: one of the 9 others, chosen by draws[i] (0..8, drawn
-- by PyTorch's get_y_neg as torch.randint(9, (1,)) for each row in turn)
function M.y_neg(y, draws)
  local out = {}
  local labels, picks = y:tolist(), draws:tolist()
  for i, label in ipairs(labels) do
    local k = picks[i] + 1  -- the k-th label of 1..10 without `label`
    out[i] = k >= label and k + 1 or k
  end
  return torch.tensor(out, {dtype = 'int64', device = y:device()})
end

return M
