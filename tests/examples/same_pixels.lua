-- engine run same_pixels.lua A B: exits 0 when images A and B decode to the same pixels, else
-- fails naming how many differ (an image the engine wrote against one torchvision wrote)
local torch, data = require 'torch', require 'data'
local a, b = data.load_image(arg[1]), data.load_image(arg[2])
if not torch.equal(torch.tensor(a:size()), torch.tensor(b:size())) then
  error(('%s and %s differ in size'):format(arg[1], arg[2]), 0)
end
local differing = a:ne(b):sum():item()
if differing > 0 then
  error(('%s and %s differ in %d of %d values'):format(arg[1], arg[2], differing, a:numel()), 0)
end
print('same pixels')
