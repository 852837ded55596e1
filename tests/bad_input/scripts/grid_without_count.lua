-- bad input: a grid over a uniform range without count
local spec = require 'base'
local search = require 'search'
spec.hparams.lr = search.uniform(0.001, 1)
spec.searcher = {name = 'grid', metric = 'validation.loss'}
return spec
