-- pytorch/examples' super_resolution model (ESPCN, Shi et al. 2016): four convolutions on the
-- low-resolution Y channel, the last with factor^2 channels that nn.PixelShuffle rearranges
-- into an image `factor` times larger; orthogonal initial weights.
local nn = require 'nn'

local Net = nn.Module:extend('SuperResolutionNet')

function Net:init(upscale_factor)
  self.relu = nn.ReLU()
  self.conv1 = nn.Conv2d(1, 64, {5, 5}, {stride = 1, padding = 2})
  self.conv2 = nn.Conv2d(64, 64, {3, 3}, {stride = 1, padding = 1})
  self.conv3 = nn.Conv2d(64, 32, {3, 3}, {stride = 1, padding = 1})
  self.conv4 = nn.Conv2d(32, upscale_factor ^ 2, {3, 3}, {stride = 1, padding = 1})
  self.pixel_shuffle = nn.PixelShuffle(upscale_factor)
  self:_initialize_weights()
end

function Net:forward(x)
  x = self.relu(self.conv1(x))
  x = self.relu(self.conv2(x))
  x = self.relu(self.conv3(x))
  return self.pixel_shuffle(self.conv4(x))
end

function Net:_initialize_weights()
  local gain = nn.init.calculate_gain('relu')
  nn.init.orthogonal_(self.conv1.weight, gain)
  nn.init.orthogonal_(self.conv2.weight, gain)
  nn.init.orthogonal_(self.conv3.weight, gain)
  nn.init.orthogonal_(self.conv4.weight)
end

return Net
