-- pytorch/examples' DCGAN: a generator of transposed convolutions from noise to 64x64 images, a
-- discriminator of convolutions to one probability, PyTorch's weights_init, and a module holding
-- both (the trained model: its G and D are stepped by optimizers of their own).
local torch, nn = require 'torch', require 'nn'

local M = {}

-- DCGAN's initialisation: N(0, 0.02) convolutions, N(1, 0.02) batch-norm scales, zero shifts
function M.weights_init(m)
  local name = tostring(m)
  if name:match('^Conv') then
    nn.init.normal_(m.weight, 0.0, 0.02)
  elseif name:match('^BatchNorm') then
    nn.init.normal_(m.weight, 1.0, 0.02)
    nn.init.zeros_(m.bias)
  end
end

local Generator = nn.Module:extend('Generator')
M.Generator = Generator
function Generator:init(nz, ngf, nc)
  self.main = nn.Sequential{
    nn.ConvTranspose2d(nz, ngf * 8, 4, {stride = 1, padding = 0, bias = false}),
    nn.BatchNorm2d(ngf * 8), nn.ReLU(),
    nn.ConvTranspose2d(ngf * 8, ngf * 4, 4, {stride = 2, padding = 1, bias = false}),
    nn.BatchNorm2d(ngf * 4), nn.ReLU(),
    nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, {stride = 2, padding = 1, bias = false}),
    nn.BatchNorm2d(ngf * 2), nn.ReLU(),
    nn.ConvTranspose2d(ngf * 2, ngf, 4, {stride = 2, padding = 1, bias = false}),
    nn.BatchNorm2d(ngf), nn.ReLU(),
    nn.ConvTranspose2d(ngf, nc, 4, {stride = 2, padding = 1, bias = false}),
    nn.Tanh(),
  }
end
function Generator:forward(z) return self.main(z) end

local Discriminator = nn.Module:extend('Discriminator')
M.Discriminator = Discriminator
function Discriminator:init(nc, ndf)
  self.main = nn.Sequential{
    nn.Conv2d(nc, ndf, 4, {stride = 2, padding = 1, bias = false}), nn.LeakyReLU(0.2),
    nn.Conv2d(ndf, ndf * 2, 4, {stride = 2, padding = 1, bias = false}),
    nn.BatchNorm2d(ndf * 2), nn.LeakyReLU(0.2),
    nn.Conv2d(ndf * 2, ndf * 4, 4, {stride = 2, padding = 1, bias = false}),
    nn.BatchNorm2d(ndf * 4), nn.LeakyReLU(0.2),
    nn.Conv2d(ndf * 4, ndf * 8, 4, {stride = 2, padding = 1, bias = false}),
    nn.BatchNorm2d(ndf * 8), nn.LeakyReLU(0.2),
    nn.Conv2d(ndf * 8, 1, 4, {stride = 1, padding = 0, bias = false}),
    nn.Sigmoid(),
  }
end
function Discriminator:forward(x) return self.main(x):view(-1, 1):squeeze(2) end

-- Both networks, built and initialised in the original's order (the generator first).
local DCGAN = nn.Module:extend('DCGAN')
M.DCGAN = DCGAN
function DCGAN:init(nz, ngf, ndf, nc)
  self.G = Generator(nz, ngf, nc)
  self.G:apply(M.weights_init)
  self.D = Discriminator(nc, ndf)
  self.D:apply(M.weights_init)
end
function DCGAN:forward(x) return self.D(x) end

return M
