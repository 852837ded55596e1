-- pytorch/examples' mnist_forward_forward: a 784-500-500 network trained layer by layer with the
-- forward-forward algorithm on one batch of `train_size` MNIST digits. Each layer has its own
-- Adam, stepped by name: steps 1..epochs train the first layer, the next `epochs` the second,
-- on the first layer's outputs. The train and test errors are measured after the last step
-- (train_error in its row of /metrics/train, error in /metrics/validation).
--   engine train scripts/examples/mnist_forward_forward.lua [--set data=MNIST_FOLDER]
local torch, nn, optim, data = require 'torch', require 'nn', require 'optim', require 'data'
local ff = require 'forward_forward'

local DIMS = {784, 500, 500}

local function mnist(hp, split, size)
  local root = hp.data ~= '' and hp.data or nil
  return data.mnist{root = root, split = split}
    :map(data.normalize{mean = 0.1307, std = 0.3081}):take(size):batch(size)
end

-- The positive and negative data as `layer` sees them: through the layers before it, trained
-- and left as they are. Made once per layer, as the original makes them: every epoch reads the
-- same one batch (the first train_size digits, in order).
local inputs = {}
local function layer_inputs(model, layer, x, y, neg_draws)
  if inputs.layer ~= layer then
    local x_pos = ff.overlay_y_on_x(x, y)
    local x_neg = ff.overlay_y_on_x(x, ff.y_neg(y, neg_draws))
    torch.no_grad(function()
      for i = 1, layer - 1 do
        x_pos, x_neg = model.layers[i](x_pos), model.layers[i](x_neg)
      end
    end)
    inputs = {layer = layer, pos = x_pos:keep(), neg = x_neg:keep()}
  end
  return inputs.pos, inputs.neg
end

return {
  name = 'mnist_forward_forward',
  seed = 1,
  hparams = {epochs = 1000, lr = 0.03, threshold = 2, train_size = 50000, test_size = 10000,
             data = ''},
  model = function(hp) return ff.Net(DIMS) end,
  data = function(hp)
    return {train = mnist(hp, 'train', hp.train_size),
            validation = mnist(hp, 'test', hp.test_size)}
  end,
  optimizer = function(params, hp, model)
    local opts = {}
    for i, layer in ipairs(model.layers) do opts['layer' .. i] = optim.Adam(layer, {lr = hp.lr}) end
    return opts
  end,
  -- the draws choosing each digit's wrong label, made once, after the network as the original
  state = function(hp)
    local draws = {}
    for i = 1, hp.train_size do draws[i] = torch.randint(0, 9, {1}) end
    return {neg_draws = torch.cat(draws)}
  end,
  train_batch = function(ctx, batch, hp)
    local x, y = batch.input:view(-1, 784), batch.target
    local layer = math.floor(ctx.step_index / hp.epochs) + 1
    local h_pos, h_neg = layer_inputs(ctx.model, layer, x, y, ctx.state.neg_draws)
    local loss = ctx.model.layers[layer]:loss(h_pos, h_neg, hp.threshold)
    ctx:backward(loss)
    ctx:step('layer' .. layer)
    if ctx.step_index + 1 == (#DIMS - 1) * hp.epochs then
      -- the last step: the training digits' error
      torch.no_grad(function()
        ctx:log{train_error = 1.0 - ctx.model:predict(x):eq(y):float():mean():item()}
      end)
    end
    return {loss = loss}
  end,
  evaluate_batch = function(ctx, batch, hp)
    local x, y = batch.input:view(-1, 784), batch.target
    local error = 1.0 - ctx.model:predict(x):eq(y):float():mean():item()
    return {error = error}
  end,
  trainer = function(hp)
    local steps = (#DIMS - 1) * hp.epochs
    return {steps = steps, log_every = 1, validate_every = steps, checkpoint_every = hp.epochs,
            keep_checkpoints = 4}
  end,
}
