-- bad input: a metric that raises an error
local spec = require 'base'
spec.metrics = {boom = function(output, target) error('the metric broke') end}
return spec
