-- bad input: a validation pipeline that yields no batch (a batch larger than the split, the
-- last one dropped): refused, not a run that validates nothing and says nothing
local data = require 'data'
local spec = require 'base'
spec.data = function(hp)
  return {
    train = data.mnist{root = hp.root, split = 'train'}:batch(50),
    validation = data.mnist{root = hp.root, split = 'test'}:batch(1000, {drop_last = true}),
  }
end
return spec
