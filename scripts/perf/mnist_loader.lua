-- The engine's side of the in-memory loader benchmark (PyTorch's: scripts/perf/mnist_loader.py):
-- one epoch of Fashion-MNIST's 60000 training images, normalised, shuffled, in batches of
-- BATCH, read through the pipeline. Prints the best epoch time of EPOCHS as JSON.
--   build/bin/engine run scripts/perf/mnist_loader.lua [BATCH] [EPOCHS]
local data, engine = require 'data', require 'engine'
local batch, epochs = tonumber(arg[1]) or 64, tonumber(arg[2]) or 5
local ds = data.mnist{root = data.find('fashion-mnist'), split = 'train'}
  :map(data.normalize{mean = 0.2860, std = 0.3530}):shuffle():batch(batch)
local best = math.huge
for epoch = 1, epochs do
  local start, n = engine.clock(), 0
  for b in ds:iter{epoch = epoch} do n = n + b.input:size(1) end
  assert(n == 60000)
  best = math.min(best, engine.clock() - start)
end
print(('{"batch": %d, "epoch_seconds": %.4f}'):format(batch, best))
