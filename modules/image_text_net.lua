-- A model of two inputs, an image and a text: a small CNN reads the image, the text's token
-- embeddings are averaged, and a linear head reads both. Its forward takes the
-- batch's inputs as one table, as the trainer hands them over when a batch holds several:
--   forward{input = images (N x 1 x 16 x 16), text = token ids (N x T, int64, 1..vocabulary)}
--   local ImageText = require 'image_text_net'
--   local net = ImageText{vocabulary = 50, classes = 4}
-- scripts/image_text.lua trains it; `engine bench --model modules/image_text_net.lua` times
-- it on the batches its example_input makes.
local torch, nn = require 'torch', require 'nn'

local ImageText = nn.Module:extend('ImageText')
ImageText.classes = 4  -- what engine bench trains it for

function ImageText:init(options)
  options = options or {}
  self.vocabulary = options.vocabulary or 50
  local width = options.width or 16
  self.image = nn.Sequential{
    nn.Conv2d(1, 8, 3, {padding = 1}), nn.ReLU(), nn.MaxPool2d(2),   -- 8 x 8 x 8
    nn.Conv2d(8, 16, 3, {padding = 1}), nn.ReLU(), nn.MaxPool2d(2),  -- 16 x 4 x 4
    nn.Flatten(), nn.Linear(16 * 4 * 4, width), nn.ReLU(),
  }
  self.text = nn.Embedding(self.vocabulary, width)
  self.head = nn.Linear(2 * width, options.classes or ImageText.classes)
end

function ImageText:forward(inputs)
  local image = self.image(inputs.input)
  local text = self.text(inputs.text):mean(2)  -- N x T x width -> N x width
  return self.head(torch.cat({image, text}, 2))
end

-- n random inputs, for engine bench
function ImageText:example_input(n)
  return {input = torch.rand(n, 1, 16, 16), text = torch.randint(1, self.vocabulary + 1, {n, 12})}
end

return ImageText
