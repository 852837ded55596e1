-- pytorch/examples' time_sequence_prediction: LSTM cells learn sine waves with LBFGS, then
-- predict `future` values past each test sequence.
--   engine train scripts/examples/time_sequence_prediction.lua
-- hp.data: an HDF5 file of /input, /target, /test_input, /test_target (tests/examples uses the
-- one PyTorch's program ran on); without it the waves are made here as the original's
-- generate_sine_wave.py makes them (from the engine's math.random, so not the same numbers).
local torch, nn, optim, data = require 'torch', require 'nn', require 'optim', require 'data'
local Sequence = require 'time_sequence'

-- N waves of length L, each shifted by a random offset, as generate_sine_wave.py
local function sine_waves(n, length, period)
  local rows = {}
  for i = 1, n do
    local shift = math.random(-4 * period, 4 * period - 1)
    rows[i] = torch.arange(length, {dtype = 'float64'}):add(shift):div(period):sin()
  end
  return torch.stack(rows, 1)
end

local function waves(hp)
  if hp.data ~= '' then return torch.load(hp.data) end
  local x = sine_waves(hp.waves, hp.length, 20)
  local l = hp.length
  return {input = x:narrow(1, 4, hp.waves - 3):narrow(2, 1, l - 1),
          target = x:narrow(1, 4, hp.waves - 3):narrow(2, 2, l - 1),
          test_input = x:narrow(1, 1, 3):narrow(2, 1, l - 1),
          test_target = x:narrow(1, 1, 3):narrow(2, 2, l - 1)}
end

return {
  name = 'time_sequence_prediction',
  seed = 0,
  hparams = {lr = 0.8, steps = 15, future = 1000, data = '', waves = 100, length = 1000},
  model = function(hp) return Sequence(51):double() end,
  data = function(hp)
    local w = waves(hp)
    return {
      train = data.tensors{input = w.input, target = w.target}:batch(w.input:size(1)),
      validation = data.tensors{input = w.test_input, target = w.test_target}:batch(3),
    }
  end,
  loss = nn.MSELoss(),
  optimizer = function(params, hp) return optim.LBFGS(params, {lr = hp.lr}) end,
  -- the test loss over the known part, after predicting `future` values past it
  evaluate_batch = function(ctx, batch, hp)
    local pred = ctx.model(batch.input, hp.future)
    return {loss = ctx.loss(pred:narrow(2, 1, batch.input:size(2)), batch.target)}
  end,
  trainer = function(hp)
    return {steps = hp.steps, validate_every = 1, log_every = 1, checkpoint_every = 1,
            keep_checkpoints = 100}
  end,
}
