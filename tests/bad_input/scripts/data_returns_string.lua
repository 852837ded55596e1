-- bad input: a data function that returns a string
local spec = require 'base'
spec.data = function(hp) return 'mnist' end
return spec
