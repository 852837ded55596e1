-- VGG 11/13/16/19 (configurations A, B, D, E): torchvision's architecture and names
-- (features.N, avgpool, classifier.0/3/6). Input N x 3 x 224 x 224; output logits N x classes.
--   require('vgg').vgg16{num_classes = 1000}
local nn = require 'nn'

local vgg = {}

local configs = {
  vgg11 = {64, 'M', 128, 'M', 256, 256, 'M', 512, 512, 'M', 512, 512, 'M'},
  vgg13 = {64, 64, 'M', 128, 128, 'M', 256, 256, 'M', 512, 512, 'M', 512, 512, 'M'},
  vgg16 = {64, 64, 'M', 128, 128, 'M', 256, 256, 256, 'M', 512, 512, 512, 'M', 512, 512, 512, 'M'},
  vgg19 = {64, 64, 'M', 128, 128, 'M', 256, 256, 256, 256, 'M', 512, 512, 512, 512, 'M', 512, 512,
           512, 512, 'M'},
}

local VGG = nn.Module:extend('VGG')
vgg.VGG = VGG

function VGG:init(config, options)
  options = options or {}
  local layers, channels = {}, 3
  for _, v in ipairs(config) do
    if v == 'M' then
      layers[#layers + 1] = nn.MaxPool2d(2, {stride = 2})
    else
      layers[#layers + 1] = nn.Conv2d(channels, v, 3, {padding = 1})
      layers[#layers + 1] = nn.ReLU()
      channels = v
    end
  end
  self.features = nn.Sequential(layers)
  self.avgpool = nn.AdaptiveAvgPool2d({7, 7})
  self.classifier = nn.Sequential {
    nn.Linear(512 * 7 * 7, 4096), nn.ReLU(), nn.Dropout(options.dropout or 0.5),
    nn.Linear(4096, 4096), nn.ReLU(), nn.Dropout(options.dropout or 0.5),
    nn.Linear(4096, options.num_classes or 1000),
  }
end

function VGG:forward(x)
  return self.classifier(self.avgpool(self.features(x)):flatten(2))
end

for id, config in pairs(configs) do
  vgg[id] = function(options) return VGG(config, options) end
end

return vgg
