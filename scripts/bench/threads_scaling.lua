-- Step time against libtorch's intra-op threads, per model and phase. The thread counts go one
-- past the cores of a 2-core machine, to show what oversubscription costs; change them with
-- engine bench scripts/bench/threads_scaling.lua --var threads=1,2,4,8,16
return {
  kind = 'benchmark',
  name = 'threads_scaling',
  parameters = { batch_size = 64, num_warmup_batches = 3, num_batches = 20 },
  variables  = { model = {'mlp', 'mnist_cnn'},
                 phase = {'training', 'inference'},
                 threads = {1, 2, 3} },
  order      = {'model', 'phase', 'threads'},
}
