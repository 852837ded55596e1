-- pytorch/examples' mnist_rnn: an LSTM classifies MNIST digits row by row, trained with
-- Adadelta and the rate multiplied by 0.7 after every epoch.
--   engine train scripts/examples/mnist_rnn.lua [--set data=MNIST_FOLDER]
local nn, optim, data = require 'nn', require 'optim', require 'data'
local Net = require 'mnist_rnn_model'

local function mnist(hp, split)
  local root = hp.data ~= '' and hp.data or nil
  return data.mnist{root = root, split = split}:map(data.normalize{mean = 0.1307, std = 0.3081})
end

return {
  name = 'mnist_rnn',
  seed = 1,
  hparams = {batch_size = 64, test_batch_size = 1000, epochs = 14, lr = 0.1, gamma = 0.7,
             data = '', shuffle = true},
  model = function(hp) return Net() end,
  data = function(hp)
    local train = mnist(hp, 'train')
    if hp.shuffle then train = train:shuffle() end
    local test = mnist(hp, 'test')
    if hp.shuffle then test = test:shuffle() end  -- the original shuffles its test loader too
    return {train = train:batch(hp.batch_size), validation = test:batch(hp.test_batch_size)}
  end,
  loss = nn.NLLLoss(),
  metrics = {'accuracy'},
  optimizer = function(params, hp) return optim.Adadelta(params, {lr = hp.lr}) end,
  scheduler = function(opt, hp) return optim.StepLR(opt, {step_size = 1, gamma = hp.gamma}) end,
  trainer = function(hp)
    return {epochs = hp.epochs, log_every = 1, validate_every = 'epoch',
            checkpoint_every = 'epoch', keep_checkpoints = 2}
  end,
}
