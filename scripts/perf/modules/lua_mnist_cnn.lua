-- The zoo's mnist_cnn (modules/mnist_cnn.lua) written as a Lua module: the same layers,
-- forward in Lua. For benchmarks of a Lua-defined model against the built-in one:
--   engine bench --model scripts/perf/modules/lua_mnist_cnn.lua --batch_size 64
local nn = require 'nn'

local LuaMnistCNN = nn.Module:extend('LuaMnistCNN')
LuaMnistCNN.input_shape, LuaMnistCNN.classes = {1, 28, 28}, 10

function LuaMnistCNN:init()
  self.conv1 = nn.Conv2d(1, 32, 3)
  self.conv2 = nn.Conv2d(32, 64, 3)
  self.dropout1 = nn.Dropout(0.25)
  self.dropout2 = nn.Dropout(0.5)
  self.fc1 = nn.Linear(9216, 128)
  self.fc2 = nn.Linear(128, 10)
end

function LuaMnistCNN:forward(x)
  x = self.conv2(self.conv1(x):relu()):relu()
  x = self.dropout1(nn.F.max_pool2d(x, 2)):flatten(2)
  x = self.dropout2(self.fc1(x):relu())
  return self.fc2(x):log_softmax(2)
end

return LuaMnistCNN
