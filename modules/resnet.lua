-- ResNets: torchvision's architecture and names (conv1, bn1, layer1.0.conv1, ..., fc), so a
-- torchvision checkpoint loads with load_state_dict; resnet200 and resnet269 use DLBS's block
-- counts with the same bottleneck blocks. Input N x 3 x 224 x 224; output logits N x classes.
--   require('resnet').resnet50{num_classes = 1000}
local nn = require 'nn'

local resnet = {}

-- Two 3x3 convolutions (resnet18, resnet34).
local BasicBlock = nn.Module:extend('BasicBlock')
BasicBlock.expansion = 1
resnet.BasicBlock = BasicBlock

function BasicBlock:init(inplanes, planes, stride, downsample)
  self.conv1 = nn.Conv2d(inplanes, planes, 3, {stride = stride, padding = 1, bias = false})
  self.bn1 = nn.BatchNorm2d(planes)
  self.relu = nn.ReLU()
  self.conv2 = nn.Conv2d(planes, planes, 3, {padding = 1, bias = false})
  self.bn2 = nn.BatchNorm2d(planes)
  if downsample then self.downsample = downsample end
end

function BasicBlock:forward(x)
  local out = self.relu(self.bn1(self.conv1(x)))
  out = self.bn2(self.conv2(out))
  local identity = self.downsample and self.downsample(x) or x
  return self.relu(out + identity)
end

-- 1x1, 3x3 (carrying the stride, as torchvision's "ResNet v1.5"), 1x1 with 4x the channels.
local Bottleneck = nn.Module:extend('Bottleneck')
Bottleneck.expansion = 4
resnet.Bottleneck = Bottleneck

function Bottleneck:init(inplanes, planes, stride, downsample)
  self.conv1 = nn.Conv2d(inplanes, planes, 1, {bias = false})
  self.bn1 = nn.BatchNorm2d(planes)
  self.conv2 = nn.Conv2d(planes, planes, 3, {stride = stride, padding = 1, bias = false})
  self.bn2 = nn.BatchNorm2d(planes)
  self.conv3 = nn.Conv2d(planes, planes * 4, 1, {bias = false})
  self.bn3 = nn.BatchNorm2d(planes * 4)
  self.relu = nn.ReLU()
  if downsample then self.downsample = downsample end
end

function Bottleneck:forward(x)
  local out = self.relu(self.bn1(self.conv1(x)))
  out = self.relu(self.bn2(self.conv2(out)))
  out = self.bn3(self.conv3(out))
  local identity = self.downsample and self.downsample(x) or x
  return self.relu(out + identity)
end

local ResNet = nn.Module:extend('ResNet')
resnet.ResNet = ResNet

local function make_layer(self, block, planes, blocks, stride)
  local downsample
  if stride ~= 1 or self.inplanes ~= planes * block.expansion then
    downsample = nn.Sequential {
      nn.Conv2d(self.inplanes, planes * block.expansion, 1, {stride = stride, bias = false}),
      nn.BatchNorm2d(planes * block.expansion),
    }
  end
  local layers = {block(self.inplanes, planes, stride, downsample)}
  self.inplanes = planes * block.expansion
  for _ = 2, blocks do layers[#layers + 1] = block(self.inplanes, planes, 1) end
  return nn.Sequential(layers)
end

function ResNet:init(block, counts, options)
  options = options or {}
  self.inplanes = 64
  self.conv1 = nn.Conv2d(3, 64, 7, {stride = 2, padding = 3, bias = false})
  self.bn1 = nn.BatchNorm2d(64)
  self.relu = nn.ReLU()
  self.maxpool = nn.MaxPool2d(3, {stride = 2, padding = 1})
  self.layer1 = make_layer(self, block, 64, counts[1], 1)
  self.layer2 = make_layer(self, block, 128, counts[2], 2)
  self.layer3 = make_layer(self, block, 256, counts[3], 2)
  self.layer4 = make_layer(self, block, 512, counts[4], 2)
  self.avgpool = nn.AdaptiveAvgPool2d({1, 1})
  self.fc = nn.Linear(512 * block.expansion, options.num_classes or 1000)
  -- torchvision's initialisation: He normal for convolutions (fan_out, relu).
  for _, m in ipairs(self:modules()) do
    if tostring(m):match('^Conv2d') then
      nn.init.kaiming_normal_(m:parameters()[1], {mode = 'fan_out', nonlinearity = 'relu'})
    end
  end
end

function ResNet:forward(x)
  x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
  x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
  return self.fc(self.avgpool(x):flatten(2))
end

local depths = {
  resnet18 = {BasicBlock, {2, 2, 2, 2}},
  resnet34 = {BasicBlock, {3, 4, 6, 3}},
  resnet50 = {Bottleneck, {3, 4, 6, 3}},
  resnet101 = {Bottleneck, {3, 4, 23, 3}},
  resnet152 = {Bottleneck, {3, 8, 36, 3}},
  resnet200 = {Bottleneck, {3, 24, 36, 3}},
  resnet269 = {Bottleneck, {3, 30, 48, 8}},
}
for id, spec in pairs(depths) do
  resnet[id] = function(options) return ResNet(spec[1], spec[2], options) end
end

return resnet
