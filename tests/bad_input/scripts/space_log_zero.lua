-- bad input: search.log from 0
local spec = require 'base'
local search = require 'search'
spec.hparams.lr = search.log(0, 1)
return spec
