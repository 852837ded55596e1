-- Inception v3: torchvision's architecture and names (Conv2d_1a_3x3.conv, Mixed_5b.branch1x1,
-- ..., fc), without the auxiliary classifier (torchvision's `inception_v3(aux_logits=False)`;
-- a checkpoint with it loads with {strict = false}). Input N x 3 x 299 x 299; output logits.
local torch, nn = require 'torch', require 'nn'
local F = nn.F
local BasicConv2d = require('googlenet').BasicConv2d  -- conv without bias, BN eps 0.001, ReLU

local inception = {}

local function avg_pool(x) return F.avg_pool2d(x, 3, {stride = 1, padding = 1}) end
local function max_pool(x) return F.max_pool2d(x, 3, {stride = 2}) end

local InceptionA = nn.Module:extend('InceptionA')
function InceptionA:init(cin, pool_features)
  self.branch1x1 = BasicConv2d(cin, 64, 1)
  self.branch5x5_1 = BasicConv2d(cin, 48, 1)
  self.branch5x5_2 = BasicConv2d(48, 64, 5, {padding = 2})
  self.branch3x3dbl_1 = BasicConv2d(cin, 64, 1)
  self.branch3x3dbl_2 = BasicConv2d(64, 96, 3, {padding = 1})
  self.branch3x3dbl_3 = BasicConv2d(96, 96, 3, {padding = 1})
  self.branch_pool = BasicConv2d(cin, pool_features, 1)
end
function InceptionA:forward(x)
  return torch.cat({
    self.branch1x1(x),
    self.branch5x5_2(self.branch5x5_1(x)),
    self.branch3x3dbl_3(self.branch3x3dbl_2(self.branch3x3dbl_1(x))),
    self.branch_pool(avg_pool(x)),
  }, 2)
end

local InceptionB = nn.Module:extend('InceptionB')
function InceptionB:init(cin)
  self.branch3x3 = BasicConv2d(cin, 384, 3, {stride = 2})
  self.branch3x3dbl_1 = BasicConv2d(cin, 64, 1)
  self.branch3x3dbl_2 = BasicConv2d(64, 96, 3, {padding = 1})
  self.branch3x3dbl_3 = BasicConv2d(96, 96, 3, {stride = 2})
end
function InceptionB:forward(x)
  return torch.cat({
    self.branch3x3(x),
    self.branch3x3dbl_3(self.branch3x3dbl_2(self.branch3x3dbl_1(x))),
    max_pool(x),
  }, 2)
end

local InceptionC = nn.Module:extend('InceptionC')
function InceptionC:init(cin, c7)
  local row = function(a, b) return BasicConv2d(a, b, {1, 7}, {padding = {0, 3}}) end
  local col = function(a, b) return BasicConv2d(a, b, {7, 1}, {padding = {3, 0}}) end
  self.branch1x1 = BasicConv2d(cin, 192, 1)
  self.branch7x7_1 = BasicConv2d(cin, c7, 1)
  self.branch7x7_2 = row(c7, c7)
  self.branch7x7_3 = col(c7, 192)
  self.branch7x7dbl_1 = BasicConv2d(cin, c7, 1)
  self.branch7x7dbl_2 = col(c7, c7)
  self.branch7x7dbl_3 = row(c7, c7)
  self.branch7x7dbl_4 = col(c7, c7)
  self.branch7x7dbl_5 = row(c7, 192)
  self.branch_pool = BasicConv2d(cin, 192, 1)
end
function InceptionC:forward(x)
  local dbl = self.branch7x7dbl_3(self.branch7x7dbl_2(self.branch7x7dbl_1(x)))
  return torch.cat({
    self.branch1x1(x),
    self.branch7x7_3(self.branch7x7_2(self.branch7x7_1(x))),
    self.branch7x7dbl_5(self.branch7x7dbl_4(dbl)),
    self.branch_pool(avg_pool(x)),
  }, 2)
end

local InceptionD = nn.Module:extend('InceptionD')
function InceptionD:init(cin)
  self.branch3x3_1 = BasicConv2d(cin, 192, 1)
  self.branch3x3_2 = BasicConv2d(192, 320, 3, {stride = 2})
  self.branch7x7x3_1 = BasicConv2d(cin, 192, 1)
  self.branch7x7x3_2 = BasicConv2d(192, 192, {1, 7}, {padding = {0, 3}})
  self.branch7x7x3_3 = BasicConv2d(192, 192, {7, 1}, {padding = {3, 0}})
  self.branch7x7x3_4 = BasicConv2d(192, 192, 3, {stride = 2})
end
function InceptionD:forward(x)
  local b7 = self.branch7x7x3_3(self.branch7x7x3_2(self.branch7x7x3_1(x)))
  return torch.cat({self.branch3x3_2(self.branch3x3_1(x)), self.branch7x7x3_4(b7), max_pool(x)}, 2)
end

local InceptionE = nn.Module:extend('InceptionE')
function InceptionE:init(cin)
  local row = function(a, b) return BasicConv2d(a, b, {1, 3}, {padding = {0, 1}}) end
  local col = function(a, b) return BasicConv2d(a, b, {3, 1}, {padding = {1, 0}}) end
  self.branch1x1 = BasicConv2d(cin, 320, 1)
  self.branch3x3_1 = BasicConv2d(cin, 384, 1)
  self.branch3x3_2a = row(384, 384)
  self.branch3x3_2b = col(384, 384)
  self.branch3x3dbl_1 = BasicConv2d(cin, 448, 1)
  self.branch3x3dbl_2 = BasicConv2d(448, 384, 3, {padding = 1})
  self.branch3x3dbl_3a = row(384, 384)
  self.branch3x3dbl_3b = col(384, 384)
  self.branch_pool = BasicConv2d(cin, 192, 1)
end
function InceptionE:forward(x)
  local b3 = self.branch3x3_1(x)
  local dbl = self.branch3x3dbl_2(self.branch3x3dbl_1(x))
  return torch.cat({
    self.branch1x1(x),
    torch.cat({self.branch3x3_2a(b3), self.branch3x3_2b(b3)}, 2),
    torch.cat({self.branch3x3dbl_3a(dbl), self.branch3x3dbl_3b(dbl)}, 2),
    self.branch_pool(avg_pool(x)),
  }, 2)
end

inception.InceptionA, inception.InceptionB, inception.InceptionC = InceptionA, InceptionB, InceptionC
inception.InceptionD, inception.InceptionE = InceptionD, InceptionE

local Inception3 = nn.Module:extend('Inception3')
inception.Inception3 = Inception3

function Inception3:init(options)
  options = options or {}
  self.Conv2d_1a_3x3 = BasicConv2d(3, 32, 3, {stride = 2})
  self.Conv2d_2a_3x3 = BasicConv2d(32, 32, 3)
  self.Conv2d_2b_3x3 = BasicConv2d(32, 64, 3, {padding = 1})
  self.maxpool1 = nn.MaxPool2d(3, {stride = 2})
  self.Conv2d_3b_1x1 = BasicConv2d(64, 80, 1)
  self.Conv2d_4a_3x3 = BasicConv2d(80, 192, 3)
  self.maxpool2 = nn.MaxPool2d(3, {stride = 2})
  self.Mixed_5b = InceptionA(192, 32)
  self.Mixed_5c = InceptionA(256, 64)
  self.Mixed_5d = InceptionA(288, 64)
  self.Mixed_6a = InceptionB(288)
  self.Mixed_6b = InceptionC(768, 128)
  self.Mixed_6c = InceptionC(768, 160)
  self.Mixed_6d = InceptionC(768, 160)
  self.Mixed_6e = InceptionC(768, 192)
  self.Mixed_7a = InceptionD(768)
  self.Mixed_7b = InceptionE(1280)
  self.Mixed_7c = InceptionE(2048)
  self.avgpool = nn.AdaptiveAvgPool2d({1, 1})
  self.dropout = nn.Dropout(options.dropout or 0.5)
  self.fc = nn.Linear(2048, options.num_classes or 1000)
end

local order = {'Conv2d_1a_3x3', 'Conv2d_2a_3x3', 'Conv2d_2b_3x3', 'maxpool1', 'Conv2d_3b_1x1',
               'Conv2d_4a_3x3', 'maxpool2', 'Mixed_5b', 'Mixed_5c', 'Mixed_5d', 'Mixed_6a',
               'Mixed_6b', 'Mixed_6c', 'Mixed_6d', 'Mixed_6e', 'Mixed_7a', 'Mixed_7b', 'Mixed_7c',
               'avgpool'}

function Inception3:forward(x)
  for _, name in ipairs(order) do x = self[name](x) end
  return self.fc(self.dropout(x:flatten(2)))
end

inception.inception3 = function(options) return Inception3(options) end

return inception
