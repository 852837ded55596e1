-- DLBS's fully connected benchmark networks, as nn.Sequential (children '0', '1', ...):
-- * deep_mnist: 784 -> 2500 -> 2000 -> 1500 -> 1000 -> 500 -> 10
-- * sensor_net: 784 -> 1024 -> 1024 -> 1024 -> 16
-- * acoustic_model: 540 -> 2048 x 5 -> 8192
-- ReLU between layers; output logits. Input N x features (or anything that flattens to it).
local nn = require 'nn'

local fcnet = {}

local function network(inputs, hidden, classes)
  local layers, previous = {nn.Flatten()}, inputs
  for _, width in ipairs(hidden) do
    layers[#layers + 1] = nn.Linear(previous, width)
    layers[#layers + 1] = nn.ReLU()
    previous = width
  end
  layers[#layers + 1] = nn.Linear(previous, classes)
  return nn.Sequential(layers)
end

function fcnet.deep_mnist(options)
  options = options or {}
  return network(784, {2500, 2000, 1500, 1000, 500}, options.num_classes or 10)
end

function fcnet.sensor_net(options)
  options = options or {}
  return network(784, {1024, 1024, 1024}, options.num_classes or 16)
end

function fcnet.acoustic_model(options)
  options = options or {}
  return network(540, {2048, 2048, 2048, 2048, 2048}, options.num_classes or 8192)
end

return fcnet
