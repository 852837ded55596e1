-- A quick CPU sweep of a few zoo models: both phases, two batch sizes, all cores.
-- engine bench scripts/bench/quick.lua   (a few minutes on 2 cores; --dry-run lists the points)
return {
  kind = 'benchmark',
  name = 'quick',
  parameters = { device = 'cpu', dtype = 'float32', data = 'synthetic',
                 num_warmup_batches = 3, num_batches = 20 },
  variables  = { model = {'mlp', 'mnist_cnn', 'lenet5', 'resnet20_cifar'},
                 phase = {'training', 'inference'},
                 batch_size = {16, 64} },
  order      = {'model', 'phase', 'batch_size'},
  extensions = {
    -- the CIFAR ResNet is the slow one here: fewer batches keep the sweep short
    { condition = {model = 'resnet20_cifar'}, parameters = {num_batches = 8} },
  },
}
