-- bad input: a searcher metric the runs do not log
local spec = require 'base'
local search = require 'search'
spec.hparams.lr = search.choice{0.01, 0.02}
spec.searcher = {name = 'grid', metric = 'validation.acc'}
return spec
