-- bad input: a metric raises an error object whose __tostring itself fails
local spec = require 'base'
local broken = setmetatable({}, {__tostring = function() error('tostring broke') end})
spec.metrics = {boom = function(output, target) error(broken) end}
return spec
