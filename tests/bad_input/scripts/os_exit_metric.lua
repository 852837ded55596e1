-- bad input: a metric that calls os.exit(0) (Lua's would end the process with exit code 0, the
-- run file left 'running', its lock file behind and its last rows lost)
local spec = require 'base'
spec.metrics = {'accuracy', leaving = function(output, target) os.exit(0) end}
return spec
