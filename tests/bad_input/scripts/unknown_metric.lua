-- bad input: an unknown metric name
local spec = require 'base'
spec.metrics = {'acuracy'}
return spec
