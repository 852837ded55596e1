-- bad input: no model
local spec = require 'base'
spec.model = nil
return spec
