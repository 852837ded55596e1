-- mlp: a three-layer perceptron for 28x28 images (269,322 parameters at 10 classes).
-- Input N x 1 x 28 x 28 (or N x 784); output log-probabilities N x classes.
local nn = require 'nn'

return function(options)
  options = options or {}
  local inputs = options.inputs or 784
  local hidden = options.hidden or 256
  local classes = options.num_classes or 10
  return nn.Sequential {
    nn.Flatten(),
    nn.Linear(inputs, hidden), nn.ReLU(),
    nn.Linear(hidden, hidden), nn.ReLU(),
    nn.Linear(hidden, classes),
    nn.LogSoftmax(2),
  }
end
