-- bad input: an evaluate_batch hook that raises an error
local spec = require 'base'
spec.evaluate_batch = function(ctx, batch, hp) error('validation broke') end
return spec
