-- MNIST with pytorch/examples' recipe: mnist_cnn, Adadelta (lr 1.0), StepLR (gamma 0.7).
-- Needs the four IDX files in datasets/mnist/: get them with `datasets/fetch mnist`.
--   engine train scripts/mnist.lua [--set epochs=1]
local nn, optim, data = require 'nn', require 'optim', require 'data'

return {
  name    = 'mnist',
  seed    = 1,
  hparams = { lr = 1.0, gamma = 0.7, batch_size = 64, test_batch_size = 1000, epochs = 3,
              max_steps = 0 },  -- max_steps > 0 stops early (smoke tests)

  model = function(hp) return nn.model('mnist_cnn') end,

  data = function(hp)
    local root = data.find('mnist')
    local norm = data.normalize{mean = 0.1307, std = 0.3081}
    return {
      train      = data.mnist{root = root, split = 'train'}:map(norm):shuffle():batch(hp.batch_size),
      validation = data.mnist{root = root, split = 'test'}:map(norm):batch(hp.test_batch_size),
    }
  end,

  loss      = nn.NLLLoss(),
  optimizer = function(params, hp) return optim.Adadelta(params, {lr = hp.lr}) end,
  scheduler = function(opt, hp) return optim.StepLR(opt, {step_size = 1, gamma = hp.gamma}) end,
  metrics   = {'accuracy', 'top5'},

  trainer = function(hp) return {
    epochs = hp.epochs,
    steps = hp.max_steps,
    validate_every = 'epoch',
    log_every = 50,
  } end,
}
