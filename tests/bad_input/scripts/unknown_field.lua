-- bad input: a misspelt top-level field
local spec = require 'base'
spec.modle = spec.model
return spec
