-- What torchvision's transforms compute on PIL images, for uint8 tensors (C x H x W or H x W):
-- the Y channel of PIL's RGB-to-YCbCr conversion, torchvision's CenterCrop and PIL's bilinear
-- resize, each to the same integers as Pillow's fixed-point code, so that data prepared the
-- PyTorch way (pytorch/examples' super_resolution) can be prepared here to the same bits.
local torch = require 'torch'

local M = {}

-- Pillow's YCbCr: each channel's share of Y in 1/64ths of a level, rounded per value (its
-- tables), summed and truncated to a level: Y = R*0.299 + G*0.587 + B*0.114 as JPEG defines it.
local SCALE = 64
local function share(weight)
  return (torch.arange(0, 256, {dtype = 'float64'}) * (weight * SCALE)):round():to('int64')
end
local Y_R, Y_G, Y_B = share(0.299), share(0.587), share(0.114)

-- image: 3 x H x W uint8 (RGB); returns H x W uint8, the Y of image.convert('YCbCr')
function M.luma(image)
  if image:dim() ~= 3 or image:size(1) ~= 3 or image:dtype() ~= 'uint8' then
    error('pil_image.luma: expects a 3 x H x W uint8 RGB image, got ' .. tostring(image), 2)
  end
  local function part(table_, channel)
    return table_:index_select(1, image[channel]:reshape(-1):to('int64') + 1)
  end
  -- in float64, where these integers and their division by a power of two are exact
  local sum = (part(Y_R, 1) + part(Y_G, 2) + part(Y_B, 3)):to('float64')
  return (sum / SCALE):floor():clamp(0, 255):to('uint8')
    :view(image:size(2), image:size(3))
end

-- torchvision's CenterCrop on an image at least `size` wide and high: the top and left offsets
-- rounded as Python's round() does (half to even)
local function python_round(v)
  local f = math.floor(v)
  local d = v - f
  if d > 0.5 or (d == 0.5 and f % 2 == 1) then return f + 1 end
  return f
end
function M.center_crop(image, size)
  local h, w = image:size(image:dim() - 1), image:size(image:dim())
  if h < size or w < size then
    error(('pil_image.center_crop: the image is %d x %d, smaller than %d'):format(h, w, size), 2)
  end
  local top, left = python_round((h - size) / 2), python_round((w - size) / 2)
  return image:narrow(image:dim() - 1, top + 1, size):narrow(image:dim(), left + 1, size)
end

-- Pillow's bilinear resampling weights from `in_size` to `out_size` values, as fixed-point
-- integers of 22 fractional bits: out_size x in_size int64
local PRECISION_BITS = 32 - 8 - 2
local computed = {}  -- 'in:out' -> the weights: a folder of photographs shares a few sizes
local function compute_coefficients(in_size, out_size)
  local scale = in_size / out_size
  local filterscale = math.max(scale, 1.0)
  local support = 1.0 * filterscale  -- the bilinear filter's support is 1
  local rows = {}
  for xx = 0, out_size - 1 do
    local center = (xx + 0.5) * scale
    local xmin = math.max(math.floor(center - support + 0.5), 0)
    local xmax = math.min(math.floor(center + support + 0.5), in_size)
    local weights, total = {}, 0
    for x = xmin, xmax - 1 do
      local t = math.abs((x - center + 0.5) / filterscale)
      local weight = t < 1 and 1 - t or 0
      weights[#weights + 1] = weight
      total = total + weight
    end
    local row = {}
    for x = 1, in_size do row[x] = 0 end
    for i, weight in ipairs(weights) do
      local k = total ~= 0 and weight / total or weight
      -- C's (int) of k * 2^22 -/+ 0.5: truncated toward zero
      local v = k * 2 ^ PRECISION_BITS
      row[xmin + i] = v < 0 and math.ceil(v - 0.5) or math.floor(v + 0.5)
    end
    rows[xx + 1] = row
  end
  return torch.tensor(rows, {dtype = 'int64'})
end
local function coefficients(in_size, out_size)
  local key = in_size .. ':' .. out_size
  computed[key] = computed[key] or compute_coefficients(in_size, out_size):keep()
  return computed[key]
end

-- one pass along the last dimension: (sum of pixel * weight + half) >> 22, clipped to 0..255
-- (the sums, below 2^31, exact in float64, as their division by 2^22)
local function pass(image, weights)
  local sums = torch.matmul(image:to('int64'), weights:t()):to('float64')
  return ((sums + 2 ^ (PRECISION_BITS - 1)) / 2 ^ PRECISION_BITS):floor():clamp(0, 255)
    :to('uint8')
end

-- PIL's Image.resize((w, h), BILINEAR) of an H x W uint8 image: horizontal pass, then vertical
function M.resize(image, h, w)
  if image:dim() ~= 2 or image:dtype() ~= 'uint8' then
    error('pil_image.resize: expects an H x W uint8 image, got ' .. tostring(image), 2)
  end
  local out = image
  if w ~= image:size(2) then out = pass(out, coefficients(image:size(2), w)) end
  if h ~= image:size(1) then out = pass(out:t(), coefficients(image:size(1), h)):t() end
  return out:contiguous()
end

-- torchvision's Resize(n) on a PIL image: the smaller edge to n, the other in proportion
-- (truncated), as transforms.Resize with an int computes it
function M.resize_smaller_edge(image, n)
  local h, w = image:size(1), image:size(2)
  if h <= w then return M.resize(image, n, math.floor(n * w / h)) end
  return M.resize(image, math.floor(n * h / w), n)
end

return M
