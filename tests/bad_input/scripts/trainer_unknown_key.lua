-- bad input: a misspelt trainer option
local spec = require 'base'
spec.trainer = function(hp) return {epochs = 1, log_evry = 5} end
return spec
