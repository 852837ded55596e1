-- bad input: a trainer option of the wrong type
local spec = require 'base'
spec.trainer = function(hp) return {epochs = 'two'} end
return spec
