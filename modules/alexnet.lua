-- AlexNet, two variants:
-- * alexnet: DLBS's, the original network (96 first filters, local response normalisation),
--   input N x 3 x 227 x 227;
-- * alexnet_owt: "one weird trick" AlexNet, which is torchvision's `alexnet` (same names and
--   parameter count, so its checkpoints load), input N x 3 x 224 x 224.
-- Output logits N x classes.
local nn = require 'nn'

local alexnet = {}

local AlexNet = nn.Module:extend('AlexNet')
alexnet.AlexNet = AlexNet

function AlexNet:init(features, classifier, pool)
  self.features = features
  if pool then self.avgpool = pool end
  self.classifier = classifier
end

function AlexNet:forward(x)
  x = self.features(x)
  if self.avgpool then x = self.avgpool(x) end
  return self.classifier(x:flatten(2))
end

function alexnet.alexnet(options)
  options = options or {}
  local lrn = function() return nn.LocalResponseNorm(5, {alpha = 1e-4, beta = 0.75, k = 2}) end
  return AlexNet(nn.Sequential {
    nn.Conv2d(3, 96, 11, {stride = 4}), nn.ReLU(), lrn(), nn.MaxPool2d(3, {stride = 2}),
    nn.Conv2d(96, 256, 5, {padding = 2}), nn.ReLU(), lrn(), nn.MaxPool2d(3, {stride = 2}),
    nn.Conv2d(256, 384, 3, {padding = 1}), nn.ReLU(),
    nn.Conv2d(384, 384, 3, {padding = 1}), nn.ReLU(),
    nn.Conv2d(384, 256, 3, {padding = 1}), nn.ReLU(), nn.MaxPool2d(3, {stride = 2}),
  }, nn.Sequential {
    nn.Linear(256 * 6 * 6, 4096), nn.ReLU(), nn.Dropout(),
    nn.Linear(4096, 4096), nn.ReLU(), nn.Dropout(),
    nn.Linear(4096, options.num_classes or 1000),
  })
end

function alexnet.alexnet_owt(options)
  options = options or {}
  return AlexNet(nn.Sequential {
    nn.Conv2d(3, 64, 11, {stride = 4, padding = 2}), nn.ReLU(), nn.MaxPool2d(3, {stride = 2}),
    nn.Conv2d(64, 192, 5, {padding = 2}), nn.ReLU(), nn.MaxPool2d(3, {stride = 2}),
    nn.Conv2d(192, 384, 3, {padding = 1}), nn.ReLU(),
    nn.Conv2d(384, 256, 3, {padding = 1}), nn.ReLU(),
    nn.Conv2d(256, 256, 3, {padding = 1}), nn.ReLU(), nn.MaxPool2d(3, {stride = 2}),
  }, nn.Sequential {
    nn.Dropout(), nn.Linear(256 * 6 * 6, 4096), nn.ReLU(),
    nn.Dropout(), nn.Linear(4096, 4096), nn.ReLU(),
    nn.Linear(4096, options.num_classes or 1000),
  }, nn.AdaptiveAvgPool2d({6, 6}))
end

return alexnet
