-- Random search over the spaces of scripts/fashion_mnist_asha.lua (learning rate, Adadelta's
-- rho, batch size): 6 trials of 450 steps each, 2 at a time (a few minutes on 2 cores). The
-- same seed draws the same trials: engine search scripts/fashion_mnist_random.lua --seed 1
local spec = require 'fashion_mnist_asha'

spec.searcher = { name = 'random', metric = 'validation.accuracy', smaller_is_better = false,
                  max_trials = 6, max_length = {steps = 450}, max_concurrent_trials = 2 }
return spec
