-- bad input: no loss
local spec = require 'base'
spec.loss = nil
return spec
