-- ResNet-50 on synthetic ImageNet-shaped images with a batch no GPU holds (1024 x 3 x 224 x 224:
-- about 100 GB of activations in float32): the GPU check's case of memory running out in a
-- training step. Expected: exit 7, "out of memory in ... step 1", the run file failed and why.
--   engine train scripts/gpu/oom_train.lua --device cuda [--set batch=64 for a run that fits]
local nn, optim, data = require 'nn', require 'optim', require 'data'
return {
  name = 'oom_train',
  seed = 1,
  hparams = { batch = 1024 },
  model = function(hp) return nn.model('resnet50', {num_classes = 1000}) end,
  data = function(hp)
    return { train = data.synthetic{shape = {3, 224, 224}, classes = 1000, size = 4 * hp.batch}
                         :batch(hp.batch) }
  end,
  loss = nn.CrossEntropyLoss(),
  optimizer = function(params, hp) return optim.SGD(params, {lr = 0.1, momentum = 0.9}) end,
  trainer = function(hp) return {epochs = 1, log_every = 1, checkpoint_every = false} end,
}
