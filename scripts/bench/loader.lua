-- The data loader alone (phase data_ingestion): synthetic samples and Fashion-MNIST's IDX files
-- (Debian's dataset-fashion-mnist) over loader threads, with and without shuffling.
return {
  kind = 'benchmark',
  name = 'loader',
  parameters = { model = 'mlp', phase = 'data_ingestion', batch_size = 64,
                 num_warmup_batches = 5, num_batches = 200 },
  variables  = { data = {'synthetic', 'real'},
                 num_loader_threads = {1, 2},
                 data_shuffle = {false, true} },
  order      = {'data', 'num_loader_threads', 'data_shuffle'},
  extensions = {
    { condition = {data = 'real'},
      parameters = { data_backend = 'idx', data_dir = '/usr/share/datasets/fashion-mnist' } },
  },
}
