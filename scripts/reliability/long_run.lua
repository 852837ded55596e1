-- A long run for docs/reliability.md: 10,000 steps of mlp on Fashion-MNIST with validation every
-- 500 steps, a checkpoint every 1,000, a logged row every 10 steps, and a Lua train_batch hook
-- that logs the process's memory with every row: resident_mb (what the process holds),
-- cpu_tensor_mb (what its tensors hold) and lua_heap_kb (Lua's own heap). Flat series after the
-- first epoch are what the run checks:
--   engine train scripts/reliability/long_run.lua && engine report runs/long_run
local nn, optim, data, torch = require 'nn', require 'optim', require 'data', require 'torch'

return {
  name = 'long_run',
  seed = 1,
  hparams = { steps = 10000, lr = 0.05, batch_size = 64 },
  model = function(hp) return nn.model('mlp') end,
  data = function(hp)
    local root = data.find('fashion-mnist')
    local norm = data.normalize{mean = 0.2860, std = 0.3530}
    return {
      train = data.mnist{root = root, split = 'train'}:map(norm):shuffle():batch(hp.batch_size),
      validation = data.mnist{root = root, split = 'test'}:map(norm):batch(1000),
    }
  end,
  loss = nn.NLLLoss(),
  optimizer = function(params, hp) return optim.SGD(params, {lr = hp.lr, momentum = 0.9}) end,
  metrics = {'accuracy'},
  trainer = function(hp)
    return {epochs = 1000, steps = hp.steps, validate_every = 500, checkpoint_every = 1000,
            keep_checkpoints = 2, log_every = 10}
  end,
  train_batch = function(ctx, batch, hp)
    local out = ctx.model(batch.input)
    local loss = ctx.loss(out, batch.target)
    ctx:backward(loss)
    ctx:step()
    local memory = torch.memory_stats()
    ctx:log{resident_mb = memory.resident_bytes / 2^20,
            cpu_tensor_mb = memory.cpu_tensor_bytes / 2^20,
            lua_heap_kb = memory.lua_heap_bytes / 1024}
    return {loss = loss, output = out}
  end,
}
