-- bad input: data() that calls os.exit(0) (Lua's would exit 0 having trained nothing)
local spec = require 'base'
spec.data = function(hp) os.exit(0) end
return spec
