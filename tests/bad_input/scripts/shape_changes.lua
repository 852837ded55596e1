-- bad input: a model whose input width does not match the data
local spec = require 'base'
local nn = require 'nn'
spec.model = function(hp) return nn.Sequential{nn.Flatten(), nn.Linear(100, 10), nn.LogSoftmax(2)} end
return spec
