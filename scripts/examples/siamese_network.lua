-- pytorch/examples' siamese_network: a ResNet-18 pair network learns whether two MNIST digits are
-- the same, from pairs drawn afresh at every access (even positions: two different images of one
-- class; odd: images of two classes), trained with BCELoss, Adadelta and StepLR.
--   engine train scripts/examples/siamese_network.lua [--set data=MNIST_FOLDER]
-- The pipeline yields positions; train_batch and evaluate_batch draw each position's pair from
-- the script's generator (math.random: seeded with the run, restored on resume), as the original's
-- APP_MATCHER.__getitem__ draws from Python's. Images are the raw 0..255 values, as the original
-- feeds them. hp.draws: an HDF5 file whose /draws are the numbers to use instead of drawing
-- (tests/examples replays the original's own draws).
local torch, nn, optim, data = require 'torch', require 'nn', require 'optim', require 'data'
local SiameseNetwork = require 'siamese'

local splits = {}  -- split -> {images = N x 1 x 28 x 28 uint8, groups = {class -> {positions}}}
local recorded     -- the draws to replay, when hp.draws is set

-- The images of a split as the original holds them (uint8), and the positions of each class
local function split_of(hp, name)
  if splits[name] then return splits[name] end
  local root = hp.data ~= '' and hp.data or nil
  local source = data.mnist{root = root, split = name}
  local images, labels
  for batch in source:batch(source:size()):iter() do images, labels = batch.input, batch.target end
  local groups = {}
  for class = 0, 9 do groups[class] = {} end
  for i, label in ipairs(labels:tolist()) do
    local group = groups[label - 1]  -- targets are 1-based classes
    group[#group + 1] = i
  end
  splits[name] = {images = images:mul(255):round():to('uint8'), groups = groups}
  return splits[name]
end

-- Python's random.randint(a, b): math.random, or the next recorded draw
local function randint(state, a, b)
  if not recorded then return math.random(a, b) end
  state.draw = state.draw + 1
  local v = recorded[state.draw]
  if v == nil or v < a or v > b then
    error(('hp.draws: draw %d is %s, not in %d..%d'):format(state.draw, tostring(v), a, b), 0)
  end
  return v
end

-- APP_MATCHER.__getitem__: the pair at 0-based position `index`, and whether it is one class
local function draw_pair(state, groups, index)
  local class = randint(state, 0, 9)
  local group = groups[class]
  local r1 = randint(state, 0, #group - 1)
  if index % 2 == 0 then
    local r2 = randint(state, 0, #group - 1)
    while r2 == r1 do r2 = randint(state, 0, #group - 1) end
    return group[r1 + 1], group[r2 + 1], 1
  end
  local other = randint(state, 0, 9)
  while other == class do other = randint(state, 0, 9) end
  local group2 = groups[other]
  return group[r1 + 1], group2[randint(state, 0, #group2 - 1) + 1], 0
end

-- the batch of pairs at the positions of `batch`: two image batches (float 0..255) and targets
local function pairs_of(ctx, split, positions)
  local firsts, seconds, targets = {}, {}, {}
  for i, position in ipairs(positions:view(-1):tolist()) do
    firsts[i], seconds[i], targets[i] = draw_pair(ctx.state, split.groups, position - 1)
  end
  local device = positions:device()
  local function images(list)
    return split.images:index_select(1, torch.tensor(list, {dtype = 'int64'})):float():to(device)
  end
  return images(firsts), images(seconds), torch.tensor(targets):to(device)
end

local function positions(count) return data.tensors{input = torch.arange(1, count + 1):view(-1, 1)} end

return {
  name = 'siamese_network',
  seed = 1,
  hparams = {batch_size = 64, test_batch_size = 1000, epochs = 14, lr = 1.0, gamma = 0.7,
             data = '', draws = ''},
  model = function(hp) return SiameseNetwork() end,
  data = function(hp)
    if hp.draws ~= '' then recorded = torch.load(hp.draws).draws:tolist() end
    local train, test = split_of(hp, 'train'), split_of(hp, 'test')
    return {train = positions(train.images:size(1)):batch(hp.batch_size),
            validation = positions(test.images:size(1)):batch(hp.test_batch_size)}
  end,
  state = function(hp) return {draw = 0} end,  -- the recorded draws used so far
  optimizer = function(params, hp) return optim.Adadelta(params, {lr = hp.lr}) end,
  scheduler = function(opt, hp) return optim.StepLR(opt, {step_size = 1, gamma = hp.gamma}) end,
  train_batch = function(ctx, batch, hp)
    local images_1, images_2, targets = pairs_of(ctx, splits.train, batch.input)
    local outputs = ctx.model(images_1, images_2):squeeze()
    local loss = nn.BCELoss()(outputs, targets)
    ctx:backward(loss)
    return {loss = loss}
  end,
  evaluate_batch = function(ctx, batch, hp)
    local images_1, images_2, targets = pairs_of(ctx, splits.test, batch.input)
    local outputs = ctx.model(images_1, images_2):squeeze()
    local n = targets:size(1)
    local correct = outputs:gt(0.5):float():eq(targets):sum():item()  -- where(outputs > 0.5, 1, 0)
    -- the original sums each batch's mean loss and divides by the split's size: the validation
    -- average, weighted by batch size, of mean / n
    return {loss = nn.BCELoss()(outputs, targets):item() / n, accuracy = correct / n}
  end,
  trainer = function(hp)
    return {epochs = hp.epochs, log_every = 1, validate_every = 'epoch',
            checkpoint_every = 'epoch', keep_checkpoints = 2}
  end,
}
