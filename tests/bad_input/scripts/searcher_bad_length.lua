-- bad input: a searcher max_length of the wrong form
local spec = require 'base'
local search = require 'search'
spec.hparams.lr = search.log(0.001, 1)
spec.searcher = {name = 'random', max_trials = 2, max_length = {epoch = 2}}
return spec
