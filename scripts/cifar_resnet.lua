-- ResNet-20 on CIFAR-10 (He et al. 2016): SGD with momentum and weight decay, a multi-step
-- schedule, random crops with 4 pixels of padding and horizontal flips.
--   engine train scripts/cifar_resnet.lua
-- Get CIFAR-10 first with `datasets/fetch cifar10` (162 MB, checked against the published MD5;
-- offline: `datasets/fetch cifar10 --file PATH/cifar-10-binary.tar.gz` with a copy made
-- elsewhere). Without it the script trains on synthetic images of the same shape, so it runs
-- anywhere; --set synthetic=true forces that.
local nn, optim, data, engine = require 'nn', require 'optim', require 'data', require 'engine'

local MEAN, STD = {0.4914, 0.4822, 0.4465}, {0.2470, 0.2435, 0.2616}

return {
  name = 'cifar_resnet',
  seed = 1,
  hparams = { lr = 0.1, batch_size = 128, epochs = 160, depth = 20, workers = 2,
              synthetic = false, synthetic_size = 2048, sync_batchnorm = false },

  model = function(hp) return nn.model('resnet' .. hp.depth .. '_cifar', {num_classes = 10}) end,

  data = function(hp)
    local found, root = pcall(data.find, 'cifar10')
    local train, test
    if found and not hp.synthetic then
      train, test = data.cifar10{root = root, split = 'train'}, data.cifar10{root = root, split = 'test'}
    else
      engine.warn('CIFAR-10 not found (' .. tostring(root):match('[^\n]*') ..
                  '): training on synthetic 3x32x32 images instead; ' ..
                  'datasets/fetch cifar10 gets the real set')
      train = data.synthetic{shape = {3, 32, 32}, classes = 10, size = hp.synthetic_size, seed = 1}
      test = data.synthetic{shape = {3, 32, 32}, classes = 10, size = hp.synthetic_size / 4, seed = 2}
    end
    local normalize = data.normalize{mean = MEAN, std = STD}
    local augment = data.compose{data.random_crop(32, {padding = 4}), data.random_flip(), data.to_float(), normalize}
    return {
      train = train:map(augment):shuffle():batch(hp.batch_size):workers(hp.workers),
      validation = test:map(data.compose{data.to_float(), normalize}):batch(500):workers(hp.workers),
    }
  end,

  loss = nn.CrossEntropyLoss(),
  optimizer = function(params, hp)
    return optim.SGD(params, {lr = hp.lr, momentum = 0.9, weight_decay = 1e-4})
  end,
  -- the paper divides the rate by 10 at 32k and 48k iterations of 64k; here at the same
  -- fractions of the run
  scheduler = function(opt, hp)
    return optim.MultiStepLR(opt, {milestones = {math.max(1, math.floor(hp.epochs / 2)),
                                                  math.max(2, math.floor(hp.epochs * 3 / 4))},
                                   gamma = 0.1})
  end,
  metrics = {'accuracy'},
  trainer = function(hp)
    -- sync_batchnorm: with --nproc, BatchNorm over the global batch (docs/distributed.md)
    return {epochs = hp.epochs, log_every = 50, keep_best = 'validation.accuracy',
            sync_batchnorm = hp.sync_batchnorm}
  end,
}
