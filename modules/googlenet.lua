-- GoogLeNet (Inception v1): torchvision's architecture and names (conv1.conv, conv1.bn,
-- inception3a.branch1.conv, ..., fc), without the auxiliary classifiers (torchvision's
-- `googlenet(aux_logits=False)`; a checkpoint with them loads with {strict = false}).
-- Input N x 3 x 224 x 224; output logits N x classes.
local torch, nn = require 'torch', require 'nn'

local googlenet = {}

-- Convolution without bias, batch norm (eps 0.001), ReLU.
local BasicConv2d = nn.Module:extend('BasicConv2d')
googlenet.BasicConv2d = BasicConv2d

function BasicConv2d:init(cin, cout, kernel, options)
  options = options or {}
  self.conv = nn.Conv2d(cin, cout, kernel, {stride = options.stride or 1,
                                            padding = options.padding or 0, bias = false})
  self.bn = nn.BatchNorm2d(cout, {eps = 0.001})
end

function BasicConv2d:forward(x)
  return self.bn(self.conv(x)):relu()
end

local Inception = nn.Module:extend('Inception')
googlenet.Inception = Inception

function Inception:init(cin, ch1x1, ch3x3red, ch3x3, ch5x5red, ch5x5, pool_proj)
  self.branch1 = BasicConv2d(cin, ch1x1, 1)
  self.branch2 = nn.Sequential {BasicConv2d(cin, ch3x3red, 1), BasicConv2d(ch3x3red, ch3x3, 3, {padding = 1})}
  -- torchvision uses a 3x3 convolution in the "5x5" branch; kept for checkpoint compatibility
  self.branch3 = nn.Sequential {BasicConv2d(cin, ch5x5red, 1), BasicConv2d(ch5x5red, ch5x5, 3, {padding = 1})}
  self.branch4 = nn.Sequential {
    nn.MaxPool2d(3, {stride = 1, padding = 1, ceil_mode = true}), BasicConv2d(cin, pool_proj, 1),
  }
end

function Inception:forward(x)
  return torch.cat({self.branch1(x), self.branch2(x), self.branch3(x), self.branch4(x)}, 2)
end

local GoogLeNet = nn.Module:extend('GoogLeNet')
googlenet.GoogLeNet = GoogLeNet

function GoogLeNet:init(options)
  options = options or {}
  local pool = function(k) return nn.MaxPool2d(k, {stride = 2, ceil_mode = true}) end
  self.conv1 = BasicConv2d(3, 64, 7, {stride = 2, padding = 3})
  self.maxpool1 = pool(3)
  self.conv2 = BasicConv2d(64, 64, 1)
  self.conv3 = BasicConv2d(64, 192, 3, {padding = 1})
  self.maxpool2 = pool(3)
  self.inception3a = Inception(192, 64, 96, 128, 16, 32, 32)
  self.inception3b = Inception(256, 128, 128, 192, 32, 96, 64)
  self.maxpool3 = pool(3)
  self.inception4a = Inception(480, 192, 96, 208, 16, 48, 64)
  self.inception4b = Inception(512, 160, 112, 224, 24, 64, 64)
  self.inception4c = Inception(512, 128, 128, 256, 24, 64, 64)
  self.inception4d = Inception(512, 112, 144, 288, 32, 64, 64)
  self.inception4e = Inception(528, 256, 160, 320, 32, 128, 128)
  self.maxpool4 = pool(2)
  self.inception5a = Inception(832, 256, 160, 320, 32, 128, 128)
  self.inception5b = Inception(832, 384, 192, 384, 48, 128, 128)
  self.avgpool = nn.AdaptiveAvgPool2d({1, 1})
  self.dropout = nn.Dropout(options.dropout or 0.2)
  self.fc = nn.Linear(1024, options.num_classes or 1000)
end

function GoogLeNet:forward(x)
  x = self.maxpool1(self.conv1(x))
  x = self.maxpool2(self.conv3(self.conv2(x)))
  x = self.maxpool3(self.inception3b(self.inception3a(x)))
  x = self.inception4c(self.inception4b(self.inception4a(x)))
  x = self.maxpool4(self.inception4e(self.inception4d(x)))
  x = self.inception5b(self.inception5a(x))
  return self.fc(self.dropout(self.avgpool(x):flatten(2)))
end

googlenet.googlenet = function(options) return GoogLeNet(options) end

return googlenet
