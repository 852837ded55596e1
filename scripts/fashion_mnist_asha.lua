-- ASHA over scripts/fashion_mnist.lua's learning rate, Adadelta's rho and the batch size, on a
-- reduced budget: 12 trials, rungs of 50, 150 and 450 steps (divisor 3), 2 trials at a time.
-- A few minutes on 2 cores:
--   engine search scripts/fashion_mnist_asha.lua
--   engine report runs/search/fashion_mnist --plot search.svg
local search = require 'search'
local spec = require 'fashion_mnist'

spec.hparams.lr = search.log(0.05, 5)
spec.hparams.rho = search.uniform(0.5, 0.99)
spec.hparams.batch_size = search.choice{32, 64, 128}
spec.searcher = { name = 'asha', metric = 'validation.accuracy', smaller_is_better = false,
                  max_trials = 12, max_rungs = 3, divisor = 3, max_length = {steps = 450},
                  max_concurrent_trials = 2 }
return spec
