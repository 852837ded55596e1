-- 200 benchmark points in one process (--isolate none) for docs/reliability.md: mlp and lenet5, training and
-- inference, five batch sizes, ten repeats of each (_repeat is the script's own label, never
-- passed to a point). Each point's peak resident memory is in the results; after the first
-- points of each kind it stays where it is:
--   engine bench scripts/reliability/sweep_200.lua --isolate none --out /tmp/sweep200
--   engine report /tmp/sweep200 --rows _repeat --cols batch_size --value peak_resident_mb
return {
  kind = 'benchmark',
  name = 'sweep_200',
  parameters = { num_warmup_batches = 2, num_batches = 40, threads = 1 },
  variables = {
    _repeat = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
    model = {'mlp', 'lenet5'},
    phase = {'training', 'inference'},
    batch_size = {8, 16, 32, 64, 128},
  },
  order = {'_repeat', 'model', 'phase', 'batch_size'},
}
