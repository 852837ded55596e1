-- Training steps of a zoo model on Fashion-MNIST for scripts/perf/distributed.sh: no
-- validation, no checkpoints, one logged row at the end; the run file's /metrics/data holds the
-- samples per second (summed over the ranks in a distributed run).
--   engine train scripts/perf/dist_step.lua --set model=mlp --set batch_size=64 --set steps=300
local nn, optim, data = require 'nn', require 'optim', require 'data'

return {
  name = 'dist_step',
  seed = 1,
  hparams = { model = 'mlp', batch_size = 64, steps = 300, lr = 0.01, workers = -1 },
  model = function(hp) return nn.model(hp.model) end,
  data = function(hp)
    local norm = data.normalize{mean = 0.2860, std = 0.3530}
    local train = data.mnist{root = data.find('fashion-mnist'), split = 'train'}
      :map(norm):shuffle():batch(hp.batch_size)
    -- workers: the loader's threads; 0 makes each batch on the training thread, -1 leaves the
    -- engine's default (one thread per four cores, at least one)
    if hp.workers >= 0 then train = train:workers(hp.workers) end
    return {train = train}
  end,
  loss = nn.NLLLoss(),
  optimizer = function(params, hp) return optim.SGD(params, {lr = hp.lr, momentum = 0.9}) end,
  trainer = function(hp)
    return {steps = hp.steps, log_every = hp.steps, checkpoint_every = false}
  end,
}
