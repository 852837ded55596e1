-- bad input: an optimizer function that returns a plain table
local spec = require 'base'
spec.optimizer = function(params, hp) return {lr = 0.1} end
return spec
