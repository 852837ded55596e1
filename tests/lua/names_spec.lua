-- PyTorch's names as a script reaches them: a missing name is an error naming it (never a silent
-- nil), layers' attributes read and assigned as in PyTorch (weight tying), tensors' attributes
-- (.data, .shape, .T) and in-place detach (issue 55, items 2 and 3).
local here = arg[0]:match('(.*/)')
package.path = here .. '?.lua;' .. package.path
local spec = require 'spec'
local torch, nn, optim = require 'torch', require 'nn', require 'optim'

spec.describe('a missing name', function()
  spec.it('in a library: PyTorch\'s name and the nearest names, at the script\'s line', function()
    spec.fails(function() return nn.Linaer end, 'names_spec.lua:', "nn has no 'Linaer'",
      'did you mean nn.Linear?')
    spec.fails(function() return nn.F.reluu end, "nn.F has no 'reluu'", 'nn.F.relu')
    spec.fails(function() return torch.arangee end, "torch has no 'arangee'", 'torch.arange')
    spec.fails(function() return optim.Adamm end, "optim has no 'Adamm'", 'optim.Adam')
    spec.fails(function() return torch.linalg.nrm end, "torch.linalg has no 'nrm'")
    -- a PyTorch name the engine leaves out on purpose says what stands for it
    spec.fails(function() return nn.DataParallel end,
      "nn has no 'DataParallel' (torch.nn.DataParallel)", 'engine train --nproc')
    -- rawget still reads a field that may be absent
    spec.equal(rawget(nn, 'NoSuchLayer'), nil)
  end)
  spec.it('on a tensor', function()
    local x = torch.ones(2)
    spec.fails(function() return x.sizee end, "Tensor has no 'sizee'", 'did you mean x:size?')
    spec.fails(function() return x:sizee() end, "Tensor has no 'sizee'")
    spec.fails(function() x.foo = 1 end, "cannot set field 'foo' of a Tensor")
  end)
  spec.it('on a built-in layer', function()
    local lin = nn.Linear(3, 2)
    spec.fails(function() return lin.wieght end, "Linear has no 'wieght'", 'did you mean m.weight?')
    spec.fails(function() lin.scale = 2 end, "cannot set field 'scale' of Linear",
      '(weight, bias)', 'nn.Module:extend')
  end)
end)

spec.describe('a layer\'s attributes', function()
  spec.it('read: parameters, an empty bias, buffers, options, children', function()
    local lin = nn.Linear(3, 2)
    spec.same_list(lin.weight:size(), {2, 3})
    spec.same_list(lin.bias:size(), {2})
    spec.equal(nn.Linear(3, 2, {bias = false}).bias, nil)  -- PyTorch's None
    spec.equal(lin.in_features, 3)
    spec.equal(lin.out_features, 2)
    local bn = nn.BatchNorm2d(4)
    spec.same_list(bn.running_mean:size(), {4})
    spec.equal(bn.num_features, 4)
    local conv = nn.Conv2d(1, 8, 3, {stride = 2})
    spec.same_list(conv.kernel_size, {3, 3})
    spec.same_list(conv.stride, {2, 2})
    local lstm = nn.LSTM(3, 5, {num_layers = 2})
    spec.same_list(lstm.weight_ih_l1:size(), {20, 5})
    spec.equal(lstm.hidden_size, 5)
    local layer = nn.TransformerEncoderLayer(8, 2, {dim_feedforward = 16})
    spec.same_list(layer.linear1.weight:size(), {16, 8})
    spec.same_list(layer.self_attn.in_proj_weight:size(), {24, 8})
  end)
  spec.it('a parameter read is the layer\'s own tensor: changes to it are the layer\'s', function()
    local lin = nn.Linear(2, 1)
    torch.no_grad(function() lin.weight:fill_(1); lin.bias:zero_() end)
    spec.equal(lin(torch.ones(1, 2)):item(), 2)
  end)
  spec.it('assigned: weight tying shares one tensor, counted, stepped and saved once', function()
    local Net = nn.Module:extend('TiedNet')
    function Net:init()
      self.encoder = nn.Embedding(10, 4)
      self.decoder = nn.Linear(4, 10)
      self.decoder.weight = self.encoder.weight
    end
    function Net:forward(x) return self.decoder(self.encoder(x)) end
    local net = Net()
    local names = {}
    for name in net:named_parameters() do names[#names + 1] = name end
    spec.same_list(names, {'encoder.weight', 'decoder.bias'})
    spec.equal(#net:parameters(), 2)
    spec.equal(net:num_parameters(), 10 * 4 + 10)
    local sd = net:state_dict()  -- PyTorch's state_dict keeps both keys
    spec.equal(torch.equal(sd['encoder.weight'], sd['decoder.weight']), true)
    local opt = optim.SGD(net, {lr = 0.5})
    local out = net(torch.tensor({{1, 2, 3}}, {dtype = 'int64'}))
    out:sum():backward()
    opt:step()
    spec.equal(torch.equal(net.encoder.weight, net.decoder.weight), true)
    -- the tied gradient is the sum of both uses: one SGD step moved the tensor once
    local path = os.getenv('ENGINE_TEST_TMP') or '/tmp'
    torch.save(path .. '/tied.h5', net:state_dict())
    local back = torch.load(path .. '/tied.h5')
    spec.equal(torch.equal(back['decoder.weight'], net.encoder.weight), true)
  end)
  spec.it('a layer\'s parameter assigned to a Lua module\'s field registers there', function()
    local Head = nn.Module:extend('SharedHead')
    function Head:init(lin)
      self.lin = lin
      self.w = lin.weight  -- a Parameter, as in PyTorch: registered under 'w'
    end
    function Head:forward(x) return x:matmul(self.w:t()) end
    local head = Head(nn.Linear(3, 2))
    local names = {}
    for name in head:named_parameters() do names[#names + 1] = name end
    spec.same_list(names, {'w', 'lin.bias'})  -- own parameters first, a shared one once (PyTorch)
    spec.equal(#head:parameters(), 2)
  end)
  spec.it('assignment errors: a computed tensor, a slot that does not exist', function()
    local lin = nn.Linear(2, 2)
    spec.fails(function() lin.weight = lin.weight * 2 end, 'a parameter must be a leaf')
    spec.fails(function() lin.weight = 3 end, "bad argument #3 to 'm.weight ='")
    lin.bias = nil
    spec.equal(lin.bias, nil)
    spec.same_list(lin(torch.zeros(1, 2)):size(), {1, 2})
  end)
end)

spec.describe('built-in layers as bases of Lua modules', function()
  spec.it('nn.Linear:extend: the layer\'s own names, its forward, its options', function()
    local Scaled = nn.Linear:extend('ScaledLinear')
    function Scaled:init(i, o, s) nn.Linear.init(self, i, o); self.s = s end
    function Scaled:forward(x) return nn.Linear.forward(self, x) * self.s end
    local m = Scaled(3, 2, 10)
    local names = {}
    for name in m:named_parameters() do names[#names + 1] = name end
    spec.same_list(names, {'weight', 'bias'})
    spec.equal(m.in_features, 3)
    local x = torch.randn(4, 3)
    local expected = x:matmul(m.weight:t()) + m.bias
    spec.equal(((m(x) - expected * 10):abs():max():item() < 1e-5), true)
    -- the module's mode reaches the layer inside: a dropout base stops dropping in eval
    local Drop = nn.Dropout:extend('MyDropout')
    local d = Drop(0.9)
    d:eval()
    spec.equal(torch.equal(d(torch.ones(10)), torch.ones(10)), true)
  end)
  spec.it('nn.Sequential:extend registers the children under PyTorch\'s names', function()
    local Block = nn.Sequential:extend('Block')
    function Block:init(c) nn.Sequential.init(self, {nn.Linear(c, c), nn.ReLU()}) end
    local names = {}
    for name in Block(4):named_parameters() do names[#names + 1] = name end
    spec.same_list(names, {'0.weight', '0.bias'})
  end)
  spec.it('a layer holding a list of layers cannot be a base yet, and says so', function()
    spec.fails(function()
      return nn.TransformerEncoder:extend('X')(nn.TransformerEncoderLayer(8, 2), 2)
    end, 'nn.TransformerEncoder cannot be the base of a Lua module yet')
  end)
  spec.it('nn.Transformer:extend: its children registered in place, one replaced as in Python',
    function()
      local options = {d_model = 8, nhead = 2, dim_feedforward = 16, num_encoder_layers = 1,
                       num_decoder_layers = 1}
      -- pytorch/examples' TransformerModel: the decoder stack replaced by a linear read-out
      local Model = nn.Transformer:extend('TransformerModel')
      function Model:init() nn.Transformer.init(self, options); self.decoder = nn.Linear(8, 5) end
      function Model:forward(x) return self.decoder(self.encoder(x)) end
      local m = Model()
      local names = {}
      for name in m:named_parameters() do names[#names + 1] = name end
      -- PyTorch's order: the encoder's, then the decoder's where the stack was
      spec.equal(names[1], 'encoder.layers.0.self_attn.in_proj_weight')
      spec.same_list({names[#names - 1], names[#names]}, {'decoder.weight', 'decoder.bias'})
      spec.same_list(m(torch.randn(3, 2, 8)):size(), {3, 2, 5})
      spec.fails(function() return nn.Transformer.forward(m, torch.randn(3, 2, 8), torch.randn(3, 2, 8)) end,
        'nn.Transformer.forward runs the layer\'s own decoder, which this module replaced')
      -- unreplaced, the base's forward is the layer's
      local Plain = nn.Transformer:extend('PlainTransformer')
      function Plain:init() nn.Transformer.init(self, options) end
      torch.manual_seed(3)
      local p = Plain()
      torch.manual_seed(3)
      local t = nn.Transformer(options)
      p:eval(); t:eval()
      local src, tgt = torch.randn(4, 2, 8), torch.randn(3, 2, 8)
      spec.equal(torch.equal(p(src, tgt), t(src, tgt)), true)
      -- an attention layer is a base too: its out_proj is a child Lua can call
      local Attention = nn.MultiheadAttention:extend('MyAttention')
      local a = Attention(8, 2)
      spec.equal(a.out_proj.in_features, 8)
    end)
end)

spec.describe('module and optimizer methods PyTorch scripts call', function()
  spec.it('add_module, requires_grad_, double', function()
    local M = nn.Module:extend('Holder')
    function M:init() self:add_module('fc', nn.Linear(2, 2)) end
    function M:forward(x) return self.fc(x) end
    local m = M()
    spec.equal(#m:parameters(), 2)
    m:requires_grad_(false)
    spec.equal(m.fc.weight:is_requires_grad(), false)
    m:double()
    spec.equal(m.fc.weight:dtype(), 'float64')
  end)
  spec.it('opt:state_dict and load_state_dict: the next step is the same', function()
    local function run(load)
      torch.manual_seed(1)
      local lin = nn.Linear(3, 1)
      local opt = optim.Adam(lin, {lr = 0.1})
      local x = torch.randn(8, 3)
      for _ = 1, 3 do opt:zero_grad(); lin(x):pow(2):mean():backward(); opt:step() end
      return lin, opt, x
    end
    local lin, opt, x = run()
    local path = (os.getenv('ENGINE_TEST_TMP') or '/tmp') .. '/opt_state.h5'
    torch.save(path, {model = lin:state_dict(), optimizer = opt:state_dict()})
    local lin2 = nn.Linear(3, 1)
    local opt2 = optim.Adam(lin2, {lr = 0.5})
    local saved = torch.load(path)
    lin2:load_state_dict(saved.model)
    opt2:load_state_dict(saved.optimizer)
    spec.equal(opt2:lr(), 0.1)
    for _, pair in ipairs({{lin, opt}, {lin2, opt2}}) do
      pair[2]:zero_grad(); pair[1](x):pow(2):mean():backward(); pair[2]:step()
    end
    spec.equal(torch.equal(lin.weight, lin2.weight), true)
    spec.fails(function() optim.SGD(lin, {lr = 1}):load_state_dict(saved.optimizer) end,
      'load_state_dict: the state is of Adam, this is SGD')
  end)
  spec.it('an LBFGS state after a step goes through state_dict and back', function()
    local lin = nn.Linear(2, 1)
    local opt = optim.LBFGS(lin, {max_iter = 3})
    local x = torch.randn(4, 2)
    opt:step(function() opt:zero_grad(); local l = lin(x):pow(2):mean(); l:backward(); return l end)
    local sd = opt:state_dict()
    optim.LBFGS(lin, {max_iter = 3}):load_state_dict(sd)
    spec.equal(sd.archive:numel() > 0, true)
  end)
  spec.it('opt:add_param_group: the new group\'s own rate, stepped', function()
    local a, b = nn.Linear(2, 2), nn.Linear(2, 2)
    local opt = optim.SGD(a, {lr = 0.1})
    opt:add_param_group{params = b, lr = 0.5}
    local before = b.weight:clone()
    b(torch.ones(1, 2)):sum():backward()
    opt:step()
    local moved = (before - b.weight):abs():sum():item()
    spec.equal(moved > 0, true)
    spec.fails(function() opt:add_param_group{params = b, momentumm = 1} end,
      "optim.SGD:add_param_group: unknown option 'momentumm'")
  end)
  spec.it('nn.utils.clip_grad_norm_ returns the norm and clips', function()
    local lin = nn.Linear(4, 4)
    lin(torch.ones(2, 4) * 10):sum():backward()
    local norm = nn.utils.clip_grad_norm_(lin, 1.0)
    spec.equal(norm > 1, true)
    local total = 0
    for _, p in ipairs(lin:parameters()) do total = total + p.grad:pow(2):sum():item() end
    spec.near(math.sqrt(total), 1.0, 1e-4)
  end)
end)

spec.describe('tensor attributes', function()
  spec.it('.data, .shape, .ndim, .T, .is_leaf, .grad = g, detach_, requires_grad_', function()
    local x = torch.randn(2, 3):requires_grad_()
    local y = x * 2
    spec.equal(x.is_leaf, true)
    spec.equal(y.is_leaf, false)
    spec.same_list(x.shape, {2, 3})
    spec.equal(x.ndim, 2)
    spec.same_list(x.T:size(), {3, 2})
    local d = y.data
    spec.equal(d:is_requires_grad(), false)
    d:zero_()  -- the same values: y sees it
    spec.equal(y:abs():sum():item(), 0)
    x.data = torch.ones(2, 3)
    spec.equal(x:sum():item(), 6)
    spec.equal(x:is_requires_grad(), true)
    x.grad = torch.ones(2, 3)
    spec.equal(x.grad:sum():item(), 6)
    spec.fails(function() x.grad = torch.ones(3) end, "x.grad = g: g's shape [3]")
    y:detach_()
    spec.equal(y:is_requires_grad(), false)
  end)
end)

spec.finish()
