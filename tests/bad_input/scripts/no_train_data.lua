-- bad input: data without a train split
local spec = require 'base'
local d = spec.data; spec.data = function(hp) local t = d(hp); t.train = nil; return t end
return spec
