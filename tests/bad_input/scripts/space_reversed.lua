-- bad input: search.uniform with lo > hi
local spec = require 'base'
local search = require 'search'
spec.hparams.lr = search.uniform(1, 0)
return spec
