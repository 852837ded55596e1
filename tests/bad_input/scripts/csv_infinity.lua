-- data.csv whose numeric column holds 'Infinity' on line 4 (strtod reads it as a number): refused
-- with file, line and column before training, not trained into a NaN loss. The file is written
-- here, at hp.file.
local nn, optim, data = require 'nn', require 'optim', require 'data'
return {
  name = 'csv_infinity',
  seed = 1,
  hparams = { file = '' },
  model = function(hp) return nn.Sequential(nn.Linear(1, 2), nn.LogSoftmax(2)) end,
  data = function(hp)
    local f = assert(io.open(hp.file, 'w'))
    f:write('size,label\n1.5,a\n2.5,b\nInfinity,a\n3.5,b\n')
    f:close()
    return { train = data.csv{path = hp.file, target = 'label'}:batch(2) }
  end,
  loss = nn.NLLLoss(),
  optimizer = function(params, hp) return optim.SGD(params, {lr = 0.01}) end,
  trainer = function(hp) return {epochs = 1, log_every = 1} end,
}
