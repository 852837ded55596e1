-- pytorch/examples' dcgan: a generator and a discriminator trained against each other, each by
-- its own Adam, stepped by name from train_batch; the fixed noise the original draws samples
-- from kept in ctx.state (checkpointed with the run).
--   engine train scripts/examples/dcgan.lua --set data=IMAGES.h5
-- hp.data: an HDF5 file with /images (N x 3 x 64 x 64 in [-1, 1]); without it, random images
-- (the original's 'fake' dataset).
local torch, nn, optim, data = require 'torch', require 'nn', require 'optim', require 'data'
local dcgan = require 'dcgan_nets'  -- not 'dcgan': that name finds this script first

return {
  name = 'dcgan',
  seed = 1,
  hparams = {lr = 0.0002, beta1 = 0.5, nz = 100, ngf = 64, ndf = 64, batch_size = 64,
             epochs = 25, data = '', fake_images = 256},
  model = function(hp) return dcgan.DCGAN(hp.nz, hp.ngf, hp.ndf, 3) end,
  data = function(hp)
    local images
    if hp.data ~= '' then
      images = torch.load(hp.data).images
    else
      -- the 'fake' data, drawn from a seed of its own: the run's generator goes on as it was
      local saved = torch.get_rng_state()
      torch.manual_seed(2)
      images = torch.rand(hp.fake_images, 3, 64, 64) * 2 - 1
      torch.set_rng_state(saved)
    end
    return {train = data.tensors{input = images, target = torch.zeros(images:size(1))}
                      :batch(hp.batch_size)}
  end,
  optimizer = function(params, hp, model)
    local betas = {hp.beta1, 0.999}
    return {discriminator = optim.Adam(model.D, {lr = hp.lr, betas = betas}),
            generator = optim.Adam(model.G, {lr = hp.lr, betas = betas})}
  end,
  state = function(hp) return {fixed_noise = torch.randn(hp.batch_size, hp.nz, 1, 1)} end,
  train_batch = function(ctx, batch, hp)
    local G, D, criterion = ctx.model.G, ctx.model.D, nn.BCELoss()
    local real = batch.input
    local n = real:size(1)
    -- (1) the discriminator: log(D(x)) + log(1 - D(G(z)))
    D:zero_grad()
    local output = D(real)
    local errD_real = criterion(output, real:new_full({n}, 1))
    ctx:backward(errD_real)
    local D_x = output:mean():item()
    local noise = torch.randn(n, hp.nz, 1, 1, {device = real:device()})
    local fake = G(noise)
    output = D(fake:detach())
    local errD_fake = criterion(output, real:new_full({n}, 0))
    ctx:backward(errD_fake)
    local D_G_z1 = output:mean():item()
    ctx:step('discriminator')
    -- (2) the generator: log(D(G(z)))
    G:zero_grad()
    output = D(fake)
    local errG = criterion(output, real:new_full({n}, 1))
    ctx:backward(errG)
    local D_G_z2 = output:mean():item()
    ctx:step('generator')
    return {loss = errD_real + errD_fake, loss_g = errG, d_x = D_x, d_g_z1 = D_G_z1,
            d_g_z2 = D_G_z2}
  end,
  trainer = function(hp)
    return {epochs = hp.epochs, log_every = 1, checkpoint_every = 'epoch', keep_checkpoints = 100}
  end,
}
