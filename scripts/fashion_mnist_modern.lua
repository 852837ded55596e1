-- The modern recipe on Fashion-MNIST (Debian's dataset-fashion-mnist, offline): AdamW with no
-- weight decay on biases (parameter groups), a linear warm-up chained to cosine annealing,
-- stepped every optimizer step, bfloat16 autocast, gradient clipping and accumulation (an
-- effective batch of 2 x 64).
--   engine train scripts/fashion_mnist_modern.lua
local nn, optim, data = require 'nn', require 'optim', require 'data'

return {
  name = 'fashion_mnist_modern',
  seed = 1,
  hparams = { lr = 2e-3, weight_decay = 0.05, batch_size = 64, accumulate = 2, epochs = 3,
              warmup_steps = 100, precision = 'bfloat16', clip = 1.0, max_steps = 0,
              validation_samples = 0 },  -- 0: the whole test split; N: its first N, for a quick look

  model = function(hp) return nn.model('mnist_cnn') end,

  data = function(hp)
    local root = data.find('fashion-mnist')
    local norm = data.normalize{mean = 0.2860, std = 0.3530}
    local validation = data.mnist{root = root, split = 'test'}:map(norm)
    if hp.validation_samples > 0 then validation = validation:take(hp.validation_samples) end
    return {
      train = data.mnist{root = root, split = 'train'}:map(norm):shuffle():batch(hp.batch_size),
      validation = validation:batch(1000),
    }
  end,

  loss = nn.NLLLoss(),
  optimizer = function(params, hp)
    -- weight decay on weights only, as is usual for AdamW: two parameter groups
    local decay, no_decay = {}, {}
    for _, p in ipairs(params) do table.insert(p:dim() > 1 and decay or no_decay, p) end
    return optim.AdamW({{params = decay}, {params = no_decay, weight_decay = 0}},
                       {lr = hp.lr, weight_decay = hp.weight_decay})
  end,
  scheduler = function(opt, hp)
    -- optimizer steps in the whole run: 60000 / 64 batches per epoch, one step per `accumulate`
    local steps = hp.max_steps > 0 and hp.max_steps or
                  math.ceil(math.ceil(60000 / hp.batch_size) / hp.accumulate) * hp.epochs
    local warmup = math.min(hp.warmup_steps, steps - 1)
    return optim.SequentialLR(opt, {
      schedulers = {optim.LinearLR(opt, {start_factor = 0.01, total_iters = warmup}),
                    optim.CosineAnnealingLR(opt, {T_max = steps - warmup})},
      milestones = {warmup}, step_mode = 'step'})
  end,
  metrics = {'accuracy', 'f1'},

  trainer = function(hp) return {
    epochs = hp.epochs, steps = hp.max_steps, log_every = 50,
    precision = hp.precision, clip_grad_norm = hp.clip, accumulate = hp.accumulate,
    early_stopping = {metric = 'validation.loss', patience = 2},
  } end,
}
