-- torchvision.utils' make_grid and save_image: a batch of images laid out in rows of `nrow`,
-- `padding` pixels of `pad_value` around each, one channel repeated to three, as torchvision
-- lays them out (pytorch/examples' vae and dcgan save their samples this way).
local torch, data = require 'torch', require 'data'

local M = {}

-- images: N x C x H x W (or C x H x W); returns 3 x H' x W' (a single image as it is)
function M.make_grid(images, opts)
  opts = opts or {}
  local nrow, padding, pad_value = opts.nrow or 8, opts.padding or 2, opts.pad_value or 0
  if images:dim() == 3 then images = images:unsqueeze(1) end
  if images:dim() ~= 4 then
    error(('make_grid: images must be N x C x H x W, got %d dimensions'):format(images:dim()), 2)
  end
  if images:size(2) == 1 then images = torch.cat({images, images, images}, 2) end
  if images:size(1) == 1 then return images:squeeze(1) end
  local n = images:size(1)
  local xmaps = math.min(nrow, n)
  local ymaps = math.ceil(n / xmaps)
  local height, width = images:size(3) + padding, images:size(4) + padding
  local grid = images:new_full({images:size(2), height * ymaps + padding, width * xmaps + padding},
                               pad_value)
  local k = 1
  for y = 0, ymaps - 1 do
    for x = 0, xmaps - 1 do
      if k > n then break end
      grid:narrow(2, y * height + padding + 1, height - padding)
          :narrow(3, x * width + padding + 1, width - padding):copy_(images[k])
      k = k + 1
    end
  end
  return grid
end

-- the grid of `images` written to `path` (PNG or JPEG), as torchvision.utils.save_image
function M.save_image(images, path, opts)
  data.save_image(path, M.make_grid(images, opts))
end

return M
