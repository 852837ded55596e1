-- bad input: a training pipeline without :batch(n)
local data = require 'data'
local spec = require 'base'
spec.data = function(hp)
  return {
    train = data.mnist{root = hp.root, split = 'train'},
  }
end
return spec
