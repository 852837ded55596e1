-- A model of two inputs, trained without a train_batch hook: each sample is a 16x16 image and
-- a short text (token ids), and the class depends on both (which half of the image is bright,
-- and whether the text mentions "red" or "blue"), so neither input alone gets above 50%.
-- data.tensors{input = images, inputs = {text = tokens}, target = classes} makes batches of two
-- inputs; the trainer hands them to the model's forward as one table (modules/image_text_net.lua).
--   engine train scripts/image_text.lua
--   engine eval scripts/image_text.lua --checkpoint runs/image_text/<run>.h5
--   engine predict scripts/image_text.lua --checkpoint ... --input new.h5   (torch.save(path,
--       {input = images, text = tokens}) writes such a file)
--   engine bench --model modules/image_text_net.lua --batch_size 32
local torch, nn, optim, data = require 'torch', require 'nn', require 'optim', require 'data'
local ImageText = require 'image_text_net'

local VOCABULARY, LENGTH = 50, 12
local RED, BLUE = 1, 2  -- the two tokens that carry the text's half of the class

-- n samples drawn from their own seed (the global generator is left as it was): images with a
-- bright top or bottom half, texts of random tokens with one "red" or "blue" among them;
-- class = 2 * bottom + blue + 1 (1..4).
local function samples(n, seed)
  local state = torch.get_rng_state()
  torch.manual_seed(seed)
  local bottom = torch.randint(0, 2, {n})
  local blue = torch.randint(0, 2, {n})
  local rows = torch.arange(1, 17):view({1, 1, 16, 1})
  local bright = rows:gt(8):eq(bottom:view({n, 1, 1, 1}):eq(1)):float()  -- n x 1 x 16 x 1
  local images = torch.rand(n, 1, 16, 16) * 0.3 + bright * 0.7
  local colour = torch.where(blue:eq(1), BLUE, RED):view({n, 1})
  local text = torch.randint(3, VOCABULARY + 1, {n, LENGTH})
  local where = torch.randint(1, LENGTH + 1, {n, 1})
  text:scatter_(2, where, colour)
  torch.set_rng_state(state)
  return {input = images, inputs = {text = text}, target = bottom * 2 + blue + 1}
end

return {
  name = 'image_text',
  description = 'two inputs: an image and a text, no hook',
  seed = 1,
  hparams = {lr = 3e-3, batch_size = 64, epochs = 6, train_size = 2048},

  model = function(hp) return ImageText{vocabulary = VOCABULARY, classes = 4} end,
  data = function(hp)
    return {
      train = data.tensors(samples(hp.train_size, 1)):shuffle():batch(hp.batch_size),
      validation = data.tensors(samples(512, 2)):batch(256),
    }
  end,
  loss = nn.CrossEntropyLoss(),
  optimizer = function(params, hp) return optim.Adam(params, {lr = hp.lr}) end,
  metrics = {'accuracy'},
  trainer = function(hp) return {epochs = hp.epochs, log_every = 8} end,
}
