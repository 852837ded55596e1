-- The training script every bad-input case starts from: each case changes one thing.
local nn, optim, data = require 'nn', require 'optim', require 'data'
return {
  name = 'base',
  seed = 1,
  hparams = { root = '' },
  model = function(hp) return nn.model('mlp') end,
  data = function(hp)
    return {
      train = data.mnist{root = hp.root, split = 'train'}:batch(50),
      validation = data.mnist{root = hp.root, split = 'test'}:batch(25),
    }
  end,
  loss = nn.NLLLoss(),
  optimizer = function(params, hp) return optim.SGD(params, {lr = 0.01}) end,
  trainer = function(hp) return {epochs = 1, log_every = 2} end,
}
