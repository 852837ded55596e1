-- pytorch/examples' super_resolution: ESPCN learns to enlarge the Y channel of photographs by
-- `upscale_factor`, from 256-pixel centre crops (less what the factor does not divide) shrunk by
-- PIL's bilinear resize, with Adam and the mean squared error; each validation reports the
-- peak signal-to-noise ratio (psnr, dB).
--   engine train scripts/examples/super_resolution.lua --set upscale_factor=3 \
--       --set data=dataset/BSDS300/images
-- hp.data: a folder of train/ and test/, each a flat folder of .png, .jpg and .jpeg images
-- (BSDS300's images/, which the original downloads), read in name order. The images are
-- prepared as torchvision's PIL transforms prepare them, to the same integers
-- (modules/pil_image.lua), and held in memory.
local torch, nn, optim, data = require 'torch', require 'nn', require 'optim', require 'data'
local Net = require 'super_resolution_net'
local pil = require 'pil_image'

-- the images of a flat folder, in name order (the original's os.listdir order is the file
-- system's)
local function image_files(folder)
  local quoted = "'" .. folder:gsub("'", "'\\''") .. "'"  -- for the shell, whatever it holds
  local listing = io.popen('LC_ALL=C ls -1 ' .. quoted .. ' 2>/dev/null')
  local files = {}
  for name in listing:lines() do
    if name:match('%.png$') or name:match('%.jpg$') or name:match('%.jpeg$') then
      files[#files + 1] = folder .. '/' .. name
    end
  end
  listing:close()
  if #files == 0 then
    error(('super_resolution: no .png, .jpg or .jpeg image in %s (hp.data must hold train/ ' ..
           'and test/ folders of images, as BSDS300/images)'):format(folder), 0)
  end
  return files
end

-- DatasetFromFolder with the original's transforms: input the Y channel's centre crop shrunk by
-- the factor, target the crop itself, both in [0, 1]
local function split(hp, name)
  local crop = 256 - 256 % hp.upscale_factor
  local inputs, targets = {}, {}
  for i, path in ipairs(image_files(hp.data .. '/' .. name)) do
    local rgb = (data.load_image(path) * 255):round():to('uint8')
    local y = pil.center_crop(pil.luma(rgb), crop)
    local small = pil.resize_smaller_edge(y, math.floor(crop / hp.upscale_factor))
    inputs[i] = small:float():div(255):unsqueeze(1)
    targets[i] = y:float():div(255):unsqueeze(1)
  end
  return data.tensors{input = torch.stack(inputs), target = torch.stack(targets)}
end

return {
  name = 'super_resolution',
  seed = 123,
  hparams = {upscale_factor = 3, batch_size = 64, test_batch_size = 10, epochs = 2, lr = 0.01,
             data = 'dataset/BSDS300/images', shuffle = true},
  model = function(hp) return Net(hp.upscale_factor) end,
  data = function(hp)
    local train = split(hp, 'train')
    if hp.shuffle then train = train:shuffle() end
    return {train = train:batch(hp.batch_size),
            validation = split(hp, 'test'):batch(hp.test_batch_size)}
  end,
  loss = nn.MSELoss(),
  metrics = {psnr = {mode = 'max'}},  -- evaluate_batch's: higher is better
  optimizer = function(params, hp) return optim.Adam(params, {lr = hp.lr}) end,
  evaluate_batch = function(ctx, batch, hp)
    local mse = ctx.loss(ctx.model(batch.input), batch.target)
    -- averaged over the split weighted by batch size (the original: over batches)
    return {loss = mse, psnr = 10 * math.log10(1 / mse:item())}
  end,
  trainer = function(hp)
    return {epochs = hp.epochs, log_every = 1, validate_every = 'epoch',
            checkpoint_every = 'epoch', keep_checkpoints = 2}
  end,
}
