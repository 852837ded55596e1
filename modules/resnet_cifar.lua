-- CIFAR ResNets (He et al. 2016, section 4.2): a 3x3 stem of 16 channels, three stages of n
-- basic blocks with 16, 32 and 64 channels (the last two starting with stride 2), global
-- average pooling and a linear layer; 6n + 2 layers: resnet20 (n = 3), resnet32, resnet44,
-- resnet56, resnet110. Shortcuts that change shape are the paper's option A: subsampled and
-- zero-padded, without parameters. Input N x 3 x 32 x 32; output logits N x classes.
--   require('resnet_cifar').resnet20{num_classes = 10}
local nn = require 'nn'

local Block = nn.Module:extend('CifarBasicBlock')

function Block:init(inplanes, planes, stride)
  self.conv1 = nn.Conv2d(inplanes, planes, 3, {stride = stride, padding = 1, bias = false})
  self.bn1 = nn.BatchNorm2d(planes)
  self.conv2 = nn.Conv2d(planes, planes, 3, {padding = 1, bias = false})
  self.bn2 = nn.BatchNorm2d(planes)
  self.relu = nn.ReLU()
  self.shortcut_stride, self.extra_channels = stride, planes - inplanes
end

function Block:forward(x)
  local out = self.relu(self.bn1(self.conv1(x)))
  out = self.bn2(self.conv2(out))
  local shortcut = x
  if self.shortcut_stride ~= 1 or self.extra_channels ~= 0 then
    -- option A: every other pixel, then zero channels on both sides
    shortcut = nn.F.avg_pool2d(x, 1, {stride = self.shortcut_stride})
    local pad = math.floor(self.extra_channels / 2)
    shortcut = nn.F.pad(shortcut, {0, 0, 0, 0, pad, self.extra_channels - pad})
  end
  return self.relu(out + shortcut)
end

local CifarResNet = nn.Module:extend('CifarResNet')

function CifarResNet:init(n, options)
  options = options or {}
  self.conv1 = nn.Conv2d(3, 16, 3, {padding = 1, bias = false})
  self.bn1 = nn.BatchNorm2d(16)
  self.relu = nn.ReLU()
  local blocks, inplanes = {}, 16
  for stage, planes in ipairs({16, 32, 64}) do
    for b = 1, n do
      blocks[#blocks + 1] = Block(inplanes, planes, (stage > 1 and b == 1) and 2 or 1)
      inplanes = planes
    end
  end
  self.blocks = nn.Sequential(blocks)
  self.pool = nn.AdaptiveAvgPool2d(1)
  self.fc = nn.Linear(64, options.num_classes or 10)
end

function CifarResNet:forward(x)
  local out = self.blocks(self.relu(self.bn1(self.conv1(x))))
  return self.fc(self.pool(out):flatten(2))
end

local M = {CifarResNet = CifarResNet}
for _, depth in ipairs({20, 32, 44, 56, 110}) do
  M['resnet' .. depth .. '_cifar'] = function(options) return CifarResNet((depth - 2) / 6, options) end
end
return M
