-- bad input: an empty search.choice
local spec = require 'base'
local search = require 'search'
spec.hparams.lr = search.choice{}
return spec
