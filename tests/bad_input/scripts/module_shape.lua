-- bad input: a layer inside a Lua module's child that does not fit (its place: head.1)
local spec = require 'base'
spec.model = function(hp) return require('two_part_net')() end
return spec
