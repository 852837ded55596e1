-- bad input: a model function that returns a number
local spec = require 'base'
spec.model = function(hp) return 7 end
return spec
