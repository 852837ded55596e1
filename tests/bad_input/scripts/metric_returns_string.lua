-- bad input: a metric that returns a string
local spec = require 'base'
spec.metrics = {word = function(output, target) return 'high' end}
return spec
