-- OverFeat (fast model, Sermanet et al. 2013) as in DLBS: five convolutions, three fully
-- connected layers with dropout. Input N x 3 x 231 x 231; output logits N x classes.
local nn = require 'nn'

local Overfeat = nn.Module:extend('Overfeat')

function Overfeat:init(options)
  options = options or {}
  self.features = nn.Sequential {
    nn.Conv2d(3, 96, 11, {stride = 4}), nn.ReLU(), nn.MaxPool2d(2, {stride = 2}),
    nn.Conv2d(96, 256, 5), nn.ReLU(), nn.MaxPool2d(2, {stride = 2}),
    nn.Conv2d(256, 512, 3, {padding = 1}), nn.ReLU(),
    nn.Conv2d(512, 1024, 3, {padding = 1}), nn.ReLU(),
    nn.Conv2d(1024, 1024, 3, {padding = 1}), nn.ReLU(), nn.MaxPool2d(2, {stride = 2}),
  }
  self.classifier = nn.Sequential {
    nn.Linear(1024 * 6 * 6, 3072), nn.ReLU(), nn.Dropout(),
    nn.Linear(3072, 4096), nn.ReLU(), nn.Dropout(),
    nn.Linear(4096, options.num_classes or 1000),
  }
end

function Overfeat:forward(x)
  return self.classifier(self.features(x):flatten(2))
end

return {overfeat = function(options) return Overfeat(options) end, Overfeat = Overfeat}
