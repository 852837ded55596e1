-- bad input: a searcher with an unknown name
local spec = require 'base'
local search = require 'search'
spec.hparams.lr = search.log(0.001, 1)
spec.searcher = {name = 'bayesian', metric = 'validation.loss'}
return spec
