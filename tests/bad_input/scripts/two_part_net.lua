-- A Lua module for module_shape.lua: its head expects 40 features where the stem gives 50.
local nn = require 'nn'
local TwoPart = nn.Module:extend('TwoPart')
function TwoPart:init()
  self.stem = nn.Linear(784, 50)
  self.head = nn.Sequential(nn.ReLU(), nn.Linear(40, 10), nn.LogSoftmax(2))
end
function TwoPart:forward(x) return self.head(self.stem(x:view(x:size(1), -1))) end
return TwoPart
