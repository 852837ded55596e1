-- bad input: a scheduler with a misspelt option
local spec = require 'base'
local optim = require 'optim'
spec.scheduler = function(opt, hp) return optim.StepLR(opt, {step_sze = 2}) end
return spec
