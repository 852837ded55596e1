-- bad input: a Lua module whose forward returns class indices (int64), not scores
local spec = require 'base'
local nn = require 'nn'
local Argmax = nn.Module:extend('Argmax')
function Argmax:init() self.fc = nn.Linear(784, 10) end
function Argmax:forward(x) return self.fc(x:flatten(2)):argmax(2) end
spec.model = function(hp) return Argmax() end
return spec
