-- bad input: hparams that is not a table
local spec = require 'base'
spec.hparams = 3
return spec
