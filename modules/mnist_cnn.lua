-- mnist_cnn: the network of pytorch/examples' MNIST recipe (1,199,882 parameters).
-- Input N x 1 x 28 x 28; output log-probabilities N x 10.
local nn = require 'nn'

return function(options)
  options = options or {}
  local classes = options.num_classes or 10
  return nn.Sequential {
    nn.Conv2d(1, 32, 3), nn.ReLU(),
    nn.Conv2d(32, 64, 3), nn.ReLU(),
    nn.MaxPool2d(2), nn.Dropout(0.25),
    nn.Flatten(),
    nn.Linear(9216, 128), nn.ReLU(), nn.Dropout(0.5),
    nn.Linear(128, classes),
    nn.LogSoftmax(2),
  }
end
