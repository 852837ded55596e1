-- The zoo's mlp (modules/mlp.lua) written as a Lua module: the same layers, forward in Lua.
-- For benchmarks of a Lua-defined model against the built-in one:
--   engine bench --model scripts/perf/modules/lua_mlp.lua --batch_size 64
local nn = require 'nn'

local LuaMLP = nn.Module:extend('LuaMLP')
LuaMLP.input_shape, LuaMLP.classes = {1, 28, 28}, 10

function LuaMLP:init()
  self.fc1 = nn.Linear(784, 256)
  self.fc2 = nn.Linear(256, 256)
  self.fc3 = nn.Linear(256, 10)
end

function LuaMLP:forward(x)
  x = self.fc1(x:flatten(2)):relu()
  x = self.fc2(x):relu()
  return self.fc3(x):log_softmax(2)
end

return LuaMLP
