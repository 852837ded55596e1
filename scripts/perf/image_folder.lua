-- The engine's side of the image loader benchmark (PyTorch's: scripts/perf/image_folder.py):
-- decode JPEGs, RandomResizedCrop(224), horizontal flip, to float, normalize, batches of BATCH,
-- on WORKERS loader threads. Prints images per second of the best of EPOCHS epochs as JSON.
--   build/bin/engine run scripts/perf/image_folder.lua ROOT WORKERS [BATCH] [EPOCHS]
local data, engine = require 'data', require 'engine'
local root, workers = arg[1], tonumber(arg[2])
local batch, epochs = tonumber(arg[3]) or 64, tonumber(arg[4]) or 3

local ds = data.image_folder{root = root}
  :map(data.random_resized_crop(224))
  :map(data.random_flip())
  :map(data.to_float())
  :map(data.normalize{mean = {0.485, 0.456, 0.406}, std = {0.229, 0.224, 0.225}})
  :shuffle():batch(batch):workers(workers)
local best = 0
for epoch = 1, epochs do
  local start, n = engine.clock(), 0
  for b in ds:iter{epoch = epoch} do n = n + b.input:size(1) end
  best = math.max(best, n / (engine.clock() - start))
end
print(('{"images": %d, "workers": %d, "images_per_second": %.1f}'):format(#data.image_folder{root = root},
  workers, best))
