-- bad input: a search.choice of numbers and words
local spec = require 'base'
local search = require 'search'
spec.hparams.lr = search.choice{0.1, 'big'}
return spec
