-- modules/pil_image.lua against Pillow: tests/fixtures/pil_image.h5 (written by
-- tests/fixtures/generate_pil_image.py) holds what Pillow and torchvision made of a few random
-- images; each must come out the same integers here. Nothing expected is typed in here.
local here = arg[0]:match('(.*/)')
package.path = here .. '?.lua;' .. here .. '../../modules/?.lua;' .. package.path
local spec = require 'spec'
local torch = require 'torch'
local pil = require 'pil_image'

local fixtures = torch.load(here .. '../fixtures/pil_image.h5')

local function same(name, got, expected)
  if not torch.equal(got, expected) then
    local differing = got:ne(expected):sum():item()
    error(('%s: %d of %d pixels differ from Pillow\'s'):format(name, differing, got:numel()), 0)
  end
end

spec.describe('PIL\'s conversions and resizes on uint8 tensors', function()
  for _, name in ipairs(spec.sorted_keys(fixtures)) do
    local c = fixtures[name]
    spec.it(name .. ': the Y of convert(\'YCbCr\')', function()
      same(name .. ' luma', pil.luma(c.rgb), c.y)
    end)
    spec.it(name .. ': CenterCrop', function()
      same(name .. ' crop', pil.center_crop(c.y, c.crop_size:item()), c.crop)
    end)
    for _, size in ipairs(spec.sorted_keys(c.resized)) do
      spec.it(name .. ': resize to ' .. size, function()
        local h, w = size:match('(%d+)x(%d+)')
        same(name .. ' resize ' .. size, pil.resize(c.y, tonumber(h), tonumber(w)),
             c.resized[size])
      end)
    end
  end
  spec.it('refuses what it does not take', function()
    spec.fails(function() return pil.luma(torch.zeros(3, 4, 4)) end, 'expects a 3 x H x W uint8')
    spec.fails(function() return pil.center_crop(torch.zeros(4, 4, {dtype = 'uint8'}), 5) end,
               'smaller than 5')
  end)
end)

spec.finish()
