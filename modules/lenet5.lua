-- LeNet-5 (LeCun et al. 1998) for 28 x 28 digits: the first convolution pads by 2 so that the
-- original 32 x 32 geometry holds. Tanh activations and average pooling, as in the paper's
-- network (without its sparse C3 connection table). Input N x 1 x 28 x 28; output logits.
local nn = require 'nn'

return function(options)
  options = options or {}
  return nn.Sequential {
    nn.Conv2d(1, 6, 5, {padding = 2}), nn.Tanh(), nn.AvgPool2d(2),
    nn.Conv2d(6, 16, 5), nn.Tanh(), nn.AvgPool2d(2),
    nn.Flatten(),
    nn.Linear(16 * 5 * 5, 120), nn.Tanh(),
    nn.Linear(120, 84), nn.Tanh(),
    nn.Linear(84, options.num_classes or 10),
  }
end
