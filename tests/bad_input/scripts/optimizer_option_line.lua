-- bad input: a string where the optimizer takes a number (the error points at this line)
local spec, optim = require 'base', require 'optim'
spec.optimizer = function(params, hp) return optim.SGD(params, {lr = 'fast'}) end
return spec
