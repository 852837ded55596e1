-- Data-parallel scaling on this machine, DLBS's weak and strong scaling in one sweep: each
-- model's training step on 1 and 2 processes (world_size; engine bench --nproc), at 32 and 64
-- samples per process. World 2 at 32 against world 1 at 32 is weak scaling (the same batch
-- per process); world 2 at 32 against world 1 at 64, strong scaling (the same global batch).
-- The results table's efficiency column takes the first, else the second (docs/benchmarks.md).
-- threads = 0: all cores, shared among a point's processes.
--   engine bench scripts/bench/data_parallel.lua      (a minute on 2 cores)
return {
  kind = 'benchmark',
  name = 'data_parallel',
  parameters = { device = 'cpu', dtype = 'float32', data = 'synthetic', phase = 'training',
                 num_warmup_batches = 5, num_batches = 30, threads = 0 },
  variables  = { model = {'mlp', 'mnist_cnn'},
                 batch_size = {32, 64},
                 world_size = {1, 2} },
  order      = {'model', 'batch_size', 'world_size'},
}
