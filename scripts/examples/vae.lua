-- pytorch/examples' vae: a variational autoencoder trained on MNIST with Adam; after each epoch,
-- the first test batch beside its reconstruction and 64 digits decoded from N(0, I) are saved as
-- torchvision saves them (results/reconstruction_<epoch>.png, results/sample_<epoch>.png).
--   engine train scripts/examples/vae.lua [--set data=MNIST_FOLDER] [--set results=FOLDER]
-- The logged loss is the original's: each batch's summed loss over its size, and the test
-- split's summed loss over its size.
local torch, optim, data = require 'torch', require 'optim', require 'data'
local VAE = require 'vae_model'
local image_grid = require 'image_grid'

local first_test_batch = true  -- the one whose reconstruction is saved, each validation

return {
  name = 'vae',
  seed = 1,
  hparams = {batch_size = 128, epochs = 10, lr = 1e-3, data = '', shuffle = true,
             results = 'results'},
  model = function(hp) return VAE() end,
  data = function(hp)
    local root = hp.data ~= '' and hp.data or nil
    local train = data.mnist{root = root, split = 'train'}
    if hp.shuffle then train = train:shuffle() end
    return {train = train:batch(hp.batch_size),
            validation = data.mnist{root = root, split = 'test'}:batch(hp.batch_size)}
  end,
  optimizer = function(params, hp) return optim.Adam(params, {lr = hp.lr}) end,
  train_batch = function(ctx, batch, hp)
    local recon, mu, logvar = ctx.model(batch.input)
    local loss = VAE.loss_function(recon, batch.input, mu, logvar)
    ctx:backward(loss)
    return {loss = loss:item() / batch.input:size(1)}
  end,
  evaluate_batch = function(ctx, batch, hp)
    local x = batch.input
    local recon, mu, logvar = ctx.model(x)
    if first_test_batch then
      first_test_batch = false
      local n = math.min(x:size(1), 8)
      local comparison = torch.cat({x:narrow(1, 1, n), recon:view(-1, 1, 28, 28):narrow(1, 1, n)})
      os.execute("mkdir -p '" .. hp.results:gsub("'", "'\\''") .. "'")  -- quoted for the shell
      image_grid.save_image(comparison:cpu(), ('%s/reconstruction_%d.png'):format(hp.results,
                                                                                  ctx.epoch),
                            {nrow = n})
    end
    return {loss = VAE.loss_function(recon, x, mu, logvar):item() / x:size(1)}
  end,
  callbacks = {
    -- 64 digits from N(0, I), drawn on the CPU as the original draws them
    on_validation_end = function(ctx)
      first_test_batch = true
      local hp = ctx.hp
      torch.no_grad(function()
        local sample = torch.randn(64, 20):to(ctx.model.fc3.weight:device())
        sample = ctx.model:decode(sample):cpu()
        image_grid.save_image(sample:view(64, 1, 28, 28),
                              ('%s/sample_%d.png'):format(hp.results, ctx.epoch))
      end)
    end,
  },
  trainer = function(hp)
    return {epochs = hp.epochs, log_every = 1, validate_every = 'epoch',
            checkpoint_every = 'epoch', keep_checkpoints = 2}
  end,
}
