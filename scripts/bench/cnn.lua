-- DLBS's CNN exploration: ImageNet-sized zoo models x batch sizes x phase. On a 2-core CPU a
-- few batches of each are what fits in minutes; on a GPU, raise num_batches and the batches:
-- engine bench scripts/bench/cnn.lua --set device=cuda --var batch_size=32,64,128
return {
  kind = 'benchmark',
  name = 'cnn',
  parameters = { device = 'cpu', dtype = 'float32', data = 'synthetic',
                 num_warmup_batches = 1, num_batches = 3 },
  variables  = { model = {'alexnet_owt', 'resnet18', 'googlenet', 'vgg11'},
                 batch_size = {2, 4},
                 phase = {'inference', 'training'} },
  order      = {'model', 'phase', 'batch_size'},
  extensions = {
    -- VGG's training step is the longest: its inference is enough for a quick look
    { condition = {model = 'vgg11', phase = 'training'}, enabled = false },
    -- a label DLBS would have built with ${...}: computed from the point
    { parameters = { label = function(p) return p.model .. '-' .. p.phase:sub(1, 5) end } },
  },
}
