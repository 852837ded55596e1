-- Throughput against batch size: powers of two from 1, per model, training phase. Batches
-- beyond what a model's memory allows are skipped after the first that runs out (see
-- --max_memory to try that on a small cap).
return {
  kind = 'benchmark',
  name = 'batch_scaling',
  parameters = { phase = 'training', num_warmup_batches = 2, num_batches = 10 },
  variables  = { model = {'mlp', 'mnist_cnn', 'resnet20_cifar'},
                 batch_size = {1, 2, 4, 8, 16, 32, 64, 128, 256} },
  order      = {'model', 'batch_size'},
  extensions = {
    -- the CIFAR ResNet's large batches take seconds each on 2 cores: fewer of them
    { condition = {model = 'resnet20_cifar', batch_size = function(b) return b >= 64 end},
      parameters = {num_batches = 3} },
  },
  -- batch 1 of a convolutional model says little about its throughput
  where = function(p) return p.model == 'mlp' or p.batch_size >= 2 end,
}
