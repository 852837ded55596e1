-- bad input: a negative seed
local spec = require 'base'
spec.seed = -4
return spec
