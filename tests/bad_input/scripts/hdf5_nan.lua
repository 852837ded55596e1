-- data.hdf5 whose input holds a NaN in one row (row 6 of 12): the loss turns NaN in the first
-- batch, and the error names the row and the file, not the learning rate. The file is written
-- here, at hp.file.
local torch, nn, optim, data = require 'torch', require 'nn', require 'optim', require 'data'
return {
  name = 'hdf5_nan',
  seed = 1,
  hparams = { file = '' },
  model = function(hp) return nn.Sequential(nn.Linear(4, 3), nn.LogSoftmax(2)) end,
  data = function(hp)
    local x = torch.ones(12, 4)
    x[7][3] = 0 / 0
    torch.save(hp.file, {x = x, y = torch.arange(0, 12):remainder(3)})
    return { train = data.hdf5{path = hp.file, input = '/x', target = '/y'}:batch(12) }
  end,
  loss = nn.NLLLoss(),
  optimizer = function(params, hp) return optim.SGD(params, {lr = 0.01}) end,
  trainer = function(hp) return {epochs = 1, log_every = 1} end,
}
