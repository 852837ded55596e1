-- bad input: a module file that forgets its `return`
local spec = require 'base'
spec.model = function(hp) return require('no_return_net')() end
return spec
