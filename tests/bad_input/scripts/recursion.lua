-- bad input: infinite recursion in the model function
local spec = require 'base'
local function deep(n) return deep(n + 1) + 1 end
spec.model = function(hp) return deep(1) end
return spec
