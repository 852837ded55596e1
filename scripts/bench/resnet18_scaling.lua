-- How does resnet18's throughput scale with batch size and threads? Both phases, batch 1 to 16,
-- 1 and 2 threads (this machine's cores; --var threads=1,2,4,8 on a bigger one). A few minutes
-- on 2 cores. Then:
--   engine report runs/bench/resnet18_scaling --rows model,phase,threads --cols batch_size
--   engine report runs/bench/resnet18_scaling --rows model,threads --plot resnet18.svg
return {
  kind = 'benchmark',
  name = 'resnet18_scaling',
  parameters = { model = 'resnet18', num_warmup_batches = 2, num_batches = 6 },
  variables  = { phase = {'training', 'inference'},
                 threads = {1, 2},
                 batch_size = {1, 2, 4, 8, 16} },
  order      = {'phase', 'threads', 'batch_size'},
}
