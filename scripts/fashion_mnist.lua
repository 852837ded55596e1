-- Fashion-MNIST with pytorch/examples' MNIST recipe: mnist_cnn, Adadelta (lr 1.0), StepLR
-- (gamma 0.7), batch 64. Data from Debian's dataset-fashion-mnist package.
--   engine train scripts/fashion_mnist.lua [--set epochs=1] [--set lr=0.5]
local nn, optim, data = require 'nn', require 'optim', require 'data'

return {
  name    = 'fashion_mnist',
  seed    = 1,
  hparams = { lr = 1.0, rho = 0.9, gamma = 0.7, batch_size = 64, test_batch_size = 1000, epochs = 2,
              max_steps = 0,        -- > 0 stops early (smoke tests)
              validate_every = 0 }, -- > 0: every so many steps, else every epoch

  model = function(hp) return nn.model('mnist_cnn') end,

  data = function(hp)
    local root = data.find('fashion-mnist')
    local norm = data.normalize{mean = 0.2860, std = 0.3530}
    return {
      train      = data.mnist{root = root, split = 'train'}:map(norm):shuffle():batch(hp.batch_size),
      validation = data.mnist{root = root, split = 'test'}:map(norm):batch(hp.test_batch_size),
    }
  end,

  loss      = nn.NLLLoss(),
  optimizer = function(params, hp) return optim.Adadelta(params, {lr = hp.lr, rho = hp.rho}) end,
  scheduler = function(opt, hp) return optim.StepLR(opt, {step_size = 1, gamma = hp.gamma}) end,
  metrics   = {'accuracy'},

  trainer = function(hp) return {
    epochs = hp.epochs,
    steps = hp.max_steps,
    validate_every = hp.validate_every > 0 and hp.validate_every or 'epoch',
    log_every = 50,
  } end,
}
