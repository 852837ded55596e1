-- nn: built-in layers, Sequential, modules written in Lua, losses, optimizers and the zoo.
package.path = arg[0]:match('(.*/)') .. '?.lua;' .. package.path
local spec = require 'spec'
local torch, nn, optim = require 'torch', require 'nn', require 'optim'
local describe, it, equal, near, same, fails = spec.describe, spec.it, spec.equal, spec.near, spec.same_list, spec.fails

local function names(module)
  local out = {}
  for name in module:named_parameters() do out[#out + 1] = name end
  return out
end

describe('nn.Sequential', function()
  it('names children 0, 1, ... and is indexed from 1', function()
    local net = nn.Sequential{nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2)}
    same(names(net), {'0.weight', '0.bias', '2.weight', '2.bias'})
    equal(#net, 3)
    same(net[1]:parameters()[1]:size(), {3, 4})
    same(net(torch.randn(5, 4)):size(), {5, 2})
    net:add(nn.LogSoftmax(2))
    equal(#net, 4)
    fails(function() return net[5] end, 'out of range 1..4')
  end)
  it('a shape mismatch names the layer and both shapes', function()
    local net = nn.Sequential{nn.Flatten(), nn.Linear(100, 10)}
    fails(function() return net(torch.randn(2, 1, 28, 28)) end, "layer '1' Linear(in_features=100", '[2, 784]', '2x784 and 100x10')
  end)
  it('a Lua module called from Lua names the layer that rejected its input (issue 59)', function()
    local Net = nn.Module:extend('TwoLayers')
    function Net:init() self.body = nn.Linear(8, 4); self.head = nn.Linear(5, 2) end
    function Net:forward(x)
      local y = self.head(self.body(x))
      return y
    end
    -- called by the script itself (a hook, engine run), not by the trainer: named as there
    fails(function() return Net()(torch.randn(3, 8)) end, "nn_spec.lua:", "layer 'head' Linear(in_features=5",
          '[3, 4]')
  end)
  it('a layer a Lua module tail-calls is named, at the line of its forward (issue 59)', function()
    local Net = nn.Module:extend('TailCall')
    function Net:init() self.body = nn.Linear(8, 4); self.head = nn.Linear(5, 2) end
    local line = debug.getinfo(1, 'l').currentline + 1
    function Net:forward(x) return self.head(self.body(x)) end  -- leaves no frame of forward
    local net = Net()
    fails(function() return net(torch.randn(3, 8)) end, 'nn_spec.lua:' .. line .. ": layer 'head' Linear(in_features=5",
          '[3, 4]')
    -- inside a module the script calls from a module's forward: named under the inner one
    local Outer = nn.Module:extend('Outer')
    function Outer:init() self.inner = Net() end
    function Outer:forward(x) return self.inner(x) end
    fails(function() return Outer()(torch.randn(3, 8)) end, "layer 'head' Linear(in_features=5")
    -- and the module still works when nothing is wrong, its results all returned
    local Pair = nn.Module:extend('Pair')
    function Pair:init() self.a = nn.Linear(2, 2) end
    function Pair:forward(x) return self.a(x), x end
    local a, b = Pair()(torch.randn(1, 2))
    assert(a:size(2) == 2 and b:size(2) == 2, 'both results of forward')
  end)
  it('state_dict and load_state_dict round-trip, and a mismatch lists the keys', function()
    local a = nn.Sequential{nn.Linear(2, 2)}
    local b = nn.Sequential{nn.Linear(2, 2)}
    b:load_state_dict(a:state_dict())
    local x = torch.randn(3, 2)
    same(a(x):totable()[1], b(x):totable()[1])
    fails(function() b:load_state_dict({['0.weight'] = torch.zeros(3, 3)}) end, 'missing keys: 0.bias', 'shape differences: 0.weight')
  end)
end)

describe('modules written in Lua', function()
  local Block = nn.Module:extend('Block')
  function Block:init(n)
    self.fc = nn.Linear(n, n)
    self.scale = nn.Parameter(torch.ones(n))
    self.note = 'plain field'
  end
  function Block:forward(x) return self.fc(x):relu() * self.scale end

  it('fields register submodules and parameters under their names', function()
    local b = Block(3)
    same(names(b), {'scale', 'fc.weight', 'fc.bias'})
    equal(b.note, 'plain field')
    equal(b:num_parameters(), 3 + 9 + 3)
  end)
  it('nest inside Sequential and other Lua modules', function()
    local Outer = nn.Module:extend('Outer')
    function Outer:init() self.inner = Block(2); self.head = nn.Sequential{Block(2), nn.Linear(2, 1)} end
    function Outer:forward(x) return self.head(self.inner(x)) end
    local o = Outer()
    same(names(o), {'inner.scale', 'inner.fc.weight', 'inner.fc.bias', 'head.0.scale', 'head.0.fc.weight',
                    'head.0.fc.bias', 'head.1.weight', 'head.1.bias'})
    same(o(torch.randn(4, 2)):size(), {4, 1})
    local net = nn.Sequential{Block(2)}
    equal(net[1].note, 'plain field')  -- the Lua object comes back, not a bare userdata
  end)
  it('inherit: a subclass overrides forward and keeps init', function()
    local Doubled = Block:extend('Doubled')
    function Doubled:forward(x) return Block.forward(self, x) * 2 end
    local d = Doubled(2)
    same(names(d), {'scale', 'fc.weight', 'fc.bias'})
    local x = torch.randn(1, 2)
    local expected = (d.fc(x):relu() * d.scale * 2):totable()[1]
    same(d(x):totable()[1], expected)
  end)
  it('train and eval reach Lua modules and their children', function()
    local b = Block(2)
    equal(b.training, true)
    b:eval()
    equal(b.training, false)
    equal(b.fc:is_training(), false)
  end)
  it('an error inside forward names the module file and line', function()
    local Broken = nn.Module:extend('Broken')
    function Broken:forward(x) return x + self.nothing end
    local err = fails(function() return nn.Sequential{Broken()}(torch.ones(1)) end, 'nn_spec.lua:')
    equal(err:find('Tensor or number expected') ~= nil, true, err)
  end)
  it('trains: gradients flow into Lua-registered parameters', function()
    torch.manual_seed(0)
    local b = Block(4)
    local opt = optim.SGD(b:parameters(), {lr = 0.1})
    local x, y = torch.randn(16, 4), torch.randn(16, 4)
    local first
    for step = 1, 30 do
      opt:zero_grad()
      local loss = ((b(x) - y) ^ 2):mean()
      loss:backward()
      opt:step()
      first = first or loss:item()
    end
    local last = ((b(x) - y) ^ 2):mean():item()
    equal(last < first, true, ('loss %g -> %g'):format(first, last))
    equal(b.scale.grad ~= nil, true)
  end)
  it('zero_grad releases gradients (nil) unless set_to_none is false', function()
    local b = Block(4)
    local opt = optim.SGD(b:parameters(), {lr = 0.1})
    local function fill() ((b(torch.randn(2, 4))) ^ 2):sum():backward() end
    fill()
    opt:zero_grad()
    equal(b.scale.grad, nil)
    fill()
    opt:zero_grad(false)
    same(b.scale.grad:totable(), torch.zeros(4):totable())
    fill()
    b:zero_grad()
    equal(b.scale.grad, nil)
    fill()
    b:zero_grad(false)
    same(b.scale.grad:totable(), torch.zeros(4):totable())
    fails(function() opt:zero_grad('yes') end, 'opt:zero_grad: set_to_none must be a boolean, got string')
    fails(function() b:zero_grad(1) end, 'm:zero_grad: set_to_none must be a boolean, got number')
  end)
  it('to(dtype) converts floating-point parameters and buffers only, as PyTorch', function()
    local Masked = nn.Module:extend('Masked')
    function Masked:init()
      self.fc = nn.Linear(3, 3)
      self.bn = nn.BatchNorm1d(3)
      self:register_buffer('mask', torch.arange(1, 4):gt(1))
    end
    function Masked:forward(x) return self.bn(self.fc(x)):masked_fill(self.mask, 0) end
    local m = Masked()
    for _, dtype in ipairs({'float64', 'float32'}) do
      m:to(dtype == 'float64' and dtype or {dtype = dtype})
      local state = m:state_dict()
      equal(state['fc.weight']:dtype(), dtype)
      equal(state['bn.running_mean']:dtype(), dtype)
      equal(state['mask']:dtype(), 'bool')
      equal(state['bn.num_batches_tracked']:dtype(), 'int64')
      same(m(torch.randn(4, 3, {dtype = dtype})):size(), {4, 3})
    end
  end)
end)

describe('modules written in Lua: gradients and training', function()
  -- Central differences in float64 against autograd, for the input and one parameter.
  local function gradcheck(module, x)
    module:to('float64')
    module:eval()
    torch.manual_seed(5)
    local weights = torch.randn(module(x):size(), {dtype = 'float64'})
    local function value(input) return (module(input) * weights):sum():item() end
    local input = x:clone():requires_grad()
    module:zero_grad();
    (module(input) * weights):sum():backward()
    local analytic = input.grad:view(-1)
    local eps = 1e-6
    for i = 1, math.min(x:numel(), 12) do
      local plus, minus = x:clone(), x:clone()
      local p, m = plus:view(-1), minus:view(-1)
      p[i] = p[i]:item() + eps
      m[i] = m[i]:item() - eps
      local numeric = (value(plus) - value(minus)) / (2 * eps)
      near(analytic[i]:item(), numeric, 1e-6 + 1e-5 * math.abs(numeric), 'd/dx[' .. i .. ']')
    end
    local name, param = module:named_parameters()()
    local grad = param.grad:view(-1)
    local flat = param:view(-1)
    torch.no_grad(function()
      for i = 1, math.min(param:numel(), 6) do
        local saved = flat[i]:item()
        flat[i] = saved + eps
        local up = value(x)
        flat[i] = saved - eps
        local down = value(x)
        flat[i] = saved
        near(grad[i]:item(), (up - down) / (2 * eps), 1e-6 + 1e-5 * math.abs(grad[i]:item()), name .. '[' .. i .. ']')
      end
    end)
  end

  it('causal self-attention (gpt) passes a finite-difference gradient check', function()
    local gpt = require 'gpt'
    torch.manual_seed(3)
    gradcheck(gpt.CausalSelfAttention(4, 2, 3, 0), torch.randn(2, 3, 4, {dtype = 'float64'}))
  end)
  it('a ResNet bottleneck block passes a finite-difference gradient check', function()
    local resnet = require 'resnet'
    torch.manual_seed(4)
    local downsample = nn.Sequential{nn.Conv2d(4, 8, 1, {bias = false}), nn.BatchNorm2d(8)}
    gradcheck(resnet.Bottleneck(4, 2, 1, downsample), torch.randn(2, 4, 3, 3, {dtype = 'float64'}))
  end)
  it('a resnet18 made of Lua basic blocks trains on synthetic data', function()
    torch.manual_seed(6)
    local model = nn.model('resnet18', {num_classes = 4})
    local x = torch.randn(8, 3, 32, 32)
    local y = torch.tensor({1, 2, 3, 4, 1, 2, 3, 4}, {dtype = 'int64'})
    local loss_fn = nn.CrossEntropyLoss()
    local opt = optim.SGD(model:parameters(), {lr = 0.05, momentum = 0.9})
    local first, last
    for _ = 1, 8 do
      opt:zero_grad()
      local loss = loss_fn(model(x), y)
      loss:backward()
      opt:step()
      first = first or loss:item()
      last = loss:item()
    end
    equal(last < 0.5 * first, true, ('loss %g -> %g'):format(first, last))
  end)
end)

describe('losses and metrics use 1-based class targets', function()
  it('NLLLoss and CrossEntropyLoss', function()
    local out = torch.tensor{{0.0, 10.0}, {10.0, 0.0}}
    local target = torch.tensor({2, 1}, {dtype = 'int64'})
    near(nn.CrossEntropyLoss()(out, target):item(), 0, 1e-3)
    near(nn.NLLLoss()(out:log_softmax(2), target):item(), 0, 1e-3)
    equal(nn.metrics.accuracy(out, target), 1)
    fails(function() return nn.NLLLoss()(out, torch.tensor({3, 1}, {dtype = 'int64'})) end, 'class 3 is out of range 1..2')
  end)
end)

describe('nn.F', function()
  it('refuses bad input with the reason', function()
    fails(function() nn.F.embedding(torch.tensor({0, 2}, {dtype = 'int64'}), torch.randn(3, 2)) end,
          'index 0 is out of range 1..3')
    fails(function() nn.F.mse_loss(torch.ones(2), torch.ones(3)) end, 'output [2] and target [3]')
    fails(function() nn.F.pad(torch.ones(1, 1, 2, 2), {1, 1}, {mode = 'mirror'}) end, 'mode must be')
    fails(function() nn.F.interpolate(torch.ones(1, 1, 2, 2), {}) end, 'give size or scale_factor')
    fails(function() nn.F.dropout(torch.ones(2), {p = 2}) end, 'p must be in [0, 1]')
  end)
  it('dropout is the identity when not training', function()
    local x = torch.randn(10)
    equal(nn.F.dropout(x, {p = 0.9, training = false}):equal(x), true)
  end)
end)

describe('optimizers and schedulers', function()
  it('StepLR decays the learning rate per step() call', function()
    local p = nn.Linear(2, 2)
    local opt = optim.Adadelta(p:parameters(), {lr = 1.0})
    local sched = optim.StepLR(opt, {step_size = 1, gamma = 0.5})
    sched:step()
    near(opt:lr(), 0.5)
    fails(function() optim.SGD(p:parameters(), {momentum = 0.9}) end, "'lr' is required")
    fails(function() optim.StepLR(opt, {gamma = 0.5}) end, "'step_size' is required")
    fails(function() optim.SGD(p:parameters(), {lr = 0.1, mom = 1}) end, "unknown option 'mom'")
  end)
end)

describe('closed-form schedulers', function()
  it('give PyTorch\'s rates step for step', function()
    -- expected: PyTorch 1.13's schedulers on SGD(lr = 0.1), the rate after each of 8 steps
    local cases = {
      {optim.ExponentialLR, {gamma = 0.5}, {0.05, 0.025, 0.0125, 0.00625, 0.003125, 0.0015625, 0.00078125, 0.000390625}},
      {optim.MultiStepLR, {milestones = {2, 5}, gamma = 0.1}, {0.1, 0.01, 0.01, 0.01, 0.001, 0.001, 0.001, 0.001}},
      {optim.CosineAnnealingLR, {T_max = 4, eta_min = 0.01},
       {0.08681980515339464, 0.055, 0.023180194846605363, 0.01, 0.023180194846605363, 0.055, 0.08681980515339469, 0.1}},
      {optim.LinearLR, {start_factor = 0.25, end_factor = 1.0, total_iters = 4}, {0.04375, 0.0625, 0.08125, 0.1, 0.1, 0.1, 0.1, 0.1}},
    }
    for _, case in ipairs(cases) do
      local opt = optim.SGD({nn.Parameter(torch.zeros(1))}, {lr = 0.1})
      local sched = case[1](opt, case[2])
      for step = 1, 8 do
        sched:step()
        near(opt:lr(), case[3][step], 1e-12)
      end
    end
    local opt = optim.SGD({nn.Parameter(torch.zeros(1))}, {lr = 0.1})
    near(optim.LinearLR(opt, {start_factor = 0.5}):lr(), 0.05, 1e-15)  -- warm-up starts at once
    fails(function() optim.CosineAnnealingLR(opt, {}) end, "'T_max' is required")
    fails(function() optim.LinearLR(opt, {start_factor = 0}) end, 'start_factor must be in (0, 1]')
    fails(function() optim.ExponentialLR(opt, {gamma = 0.5, step_mode = 'batch'}) end, "must be 'epoch' or 'step'")
  end)
end)

describe('OneCycleLR, ReduceLROnPlateau, LambdaLR and SequentialLR', function()
  -- expected: PyTorch 1.13 on SGD(lr = 0.1, momentum = 0.9) or Adam(lr = 0.1), read after
  -- construction and after each step
  local function sgd() return optim.SGD({nn.Parameter(torch.zeros(1))}, {lr = 0.1, momentum = 0.9}) end
  local function trace(opt, sched, steps, read)
    local out = {read(opt)}
    for _ = 1, steps do sched:step(); out[#out + 1] = read(opt) end
    return out
  end
  local function same(got, want)
    equal(#got, #want)
    for i = 1, #want do near(got[i], want[i], 1e-10) end
  end
  local lr = function(o) return o:lr() end
  local momentum = function(o) return o:momentum() end

  it('OneCycleLR cycles the rate and the momentum as PyTorch does', function()
    local opt = sgd()
    local sched = optim.OneCycleLR(opt, {max_lr = 1.0, total_steps = 10})
    local rates, momenta = {opt:lr()}, {opt:momentum()}
    for _ = 1, 9 do sched:step(); rates[#rates + 1] = opt:lr(); momenta[#momenta + 1] = opt:momentum() end
    same(rates, {0.04, 0.52, 1.0, 0.950484632013, 0.81174565395, 0.611262021936, 0.388741978064,
                 0.18825834605, 0.049519367987, 4e-06})
    same(momenta, {0.95, 0.9, 0.85, 0.854951556605, 0.868825509907, 0.888873953302, 0.911126046698,
                   0.931174490093, 0.945048443395, 0.95})
    local adam = optim.Adam({nn.Parameter(torch.zeros(1))}, {lr = 0.1})
    local three = optim.OneCycleLR(adam, {max_lr = 1.0, total_steps = 10, three_phase = true,
                                          anneal_strategy = 'linear'})
    same(trace(adam, three, 9, lr), {0.04, 0.52, 1.0, 0.52, 0.04, 0.0320008, 0.0240016, 0.0160024,
                                     0.0080032, 4e-06})
    same({adam:momentum()}, {0.95})
    three:step()
    fails(function() three:step() end, 'total_steps is 10')
    fails(function() optim.OneCycleLR(opt, {max_lr = 1}) end, "'total_steps' are required")
    fails(function() optim.OneCycleLR(optim.Adadelta({nn.Parameter(torch.zeros(1))}), {max_lr = 1, total_steps = 5}) end,
          'cycle_momentum needs an optimizer with momentum')
  end)

  it('ReduceLROnPlateau cuts the rate after patience validations without improvement', function()
    local opt = sgd()
    local sched = optim.ReduceLROnPlateau(opt, {factor = 0.5, patience = 1, cooldown = 1})
    local got = {}
    for _, m in ipairs({1.0, 0.9, 0.95, 0.95, 0.95, 0.95, 0.95, 0.8, 0.85, 0.9}) do
      sched:step(m); got[#got + 1] = opt:lr()
    end
    same(got, {0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.025, 0.025, 0.025, 0.0125})
    fails(function() sched:step() end, 'steps with a metric')
    fails(function() optim.ReduceLROnPlateau(opt, {metric = 'test.loss'}) end, "must be 'validation' or 'train'")
  end)

  it('LambdaLR multiplies the base rate by a Lua function of the step, called once per step', function()
    local opt, calls = sgd(), 0
    local sched = optim.LambdaLR(opt, {lr_lambda = function(t) calls = calls + 1; return 0.9 ^ t end})
    same(trace(opt, sched, 4, lr), {0.1, 0.09, 0.081, 0.0729, 0.06561})
    equal(calls, 5)
    fails(function() optim.LambdaLR(opt, function() return 'x' end) end, 'must return a number')
  end)

  it('SequentialLR chains schedulers at milestones', function()
    local opt = sgd()
    local warm = optim.LinearLR(opt, {start_factor = 0.1, total_iters = 3})
    local cosine = optim.CosineAnnealingLR(opt, {T_max = 5})
    local sched = optim.SequentialLR(opt, {schedulers = {warm, cosine}, milestones = {3}})
    same(trace(opt, sched, 8, lr), {0.01, 0.04, 0.07, 0.1, 0.090450849719, 0.065450849719,
                                    0.034549150281, 0.009549150281, 0.0})
    fails(function() optim.SequentialLR(opt, {schedulers = {warm, cosine}, milestones = {}}) end,
          'need 1 milestones')
    fails(function() optim.SequentialLR(opt, {schedulers = {optim.ReduceLROnPlateau(opt)}, milestones = {}}) end,
          'schedulers[1] must be')
  end)
end)

describe('parameter groups and LBFGS', function()
  it('give each group its own options over the defaults, as PyTorch does', function()
    -- expected: torch.optim.AdamW([{params = a, lr = 0.1}, {params = b, weight_decay = 0}],
    -- lr = 0.01), three steps of sum(a^3) + sum(b^3), float64
    local a = nn.Parameter(torch.tensor({1, -2}):double())
    local b = nn.Parameter(torch.tensor({3}):double())
    local opt = optim.AdamW({{params = {a}, lr = 0.1}, {params = {b}, weight_decay = 0}}, {lr = 0.01})
    for _ = 1, 3 do
      opt:zero_grad()
      local loss = (a ^ 3):sum() + (b ^ 3):sum()
      loss:backward()
      opt:step()
    end
    near(a[1]:item(), 0.7015196728668404, 1e-12)
    near(a[2]:item(), -2.2941981615875195, 1e-12)
    near(b[1]:item(), 2.9700065898795414, 1e-12)
    fails(function() optim.SGD({{params = {a}, mom = 1}}, {lr = 1}) end, "group 1: unknown option 'mom'")
    fails(function() optim.Adam({{params = 3}}) end, 'group 1 params')
  end)

  it('LBFGS steps with a closure and matches PyTorch', function()
    -- expected: torch.optim.LBFGS([p], lr = 1, max_iter = 5), two steps, float64
    for _, search in ipairs({false, true}) do
      local p = nn.Parameter(torch.tensor({1.5, -0.5}):double())
      local opt = optim.LBFGS({p}, {lr = 1, max_iter = 5, line_search_fn = search and 'strong_wolfe' or nil})
      local target = torch.tensor({3, 1}):double()
      local function closure()
        opt:zero_grad()
        local loss = ((p - target) ^ 2):sum() + (p[1] * p[2]) ^ 2 * 0.1
        loss:backward()
        return loss
      end
      opt:step(closure)
      opt:step(closure)
      near(p[1]:item(), 2.9147951886690673, 1e-9)
      near(p[2]:item(), 0.5406549468321818, 1e-9)
      fails(function() opt:step() end, 'LBFGS:step needs a closure')
    end
  end)
end)

describe('Adagrad and RMSprop', function()
  it('follow PyTorch step for step', function()
    -- expected: torch.optim.Adagrad / RMSprop (PyTorch 1.13) with the same options, three steps
    -- of sum(p^3) from p = {1, -2, 3} in float64
    local cases = {
      {optim.Adagrad, {lr = 0.1, lr_decay = 0.01, weight_decay = 0.1, initial_accumulator_value = 0.5},
       {0.7940625300425479, -2.2340509359946594, 2.778915557818029}},
      {optim.RMSprop, {lr = 0.01, alpha = 0.9, eps = 1e-8, weight_decay = 0.1, momentum = 0.5, centered = true},
       {0.8838714642144332, -2.1204702396595834, 2.8818932871032183}},
    }
    for _, case in ipairs(cases) do
      local p = nn.Parameter(torch.tensor({1, -2, 3}):double())
      local opt = case[1]({p}, case[2])
      for _ = 1, 3 do
        opt:zero_grad()
        local loss = (p * p * p):sum()
        loss:backward()
        opt:step()
      end
      for i = 1, 3 do near(p[i]:item(), case[3][i], 1e-12) end
    end
    local w = nn.Parameter(torch.zeros(2))
    fails(function() optim.RMSprop({w}, {alpha = -1}) end, 'optim.RMSprop: alpha must be >= 0')
    fails(function() optim.Adagrad({w}, {rate = 1}) end, "unknown option 'rate'")
    equal(tostring(optim.RMSprop({w})), 'optim.RMSprop(lr=0.010000)')
  end)
end)

describe('Adam and AdamW', function()
  it('take a step that lowers a quadratic loss', function()
    for _, make in ipairs({optim.Adam, optim.AdamW}) do
      local w = nn.Parameter(torch.tensor{3.0, -2.0})
      local opt = make({w}, {lr = 0.1})
      for _ = 1, 20 do
        opt:zero_grad()
        local loss = (w * w):sum()
        loss:backward()
        opt:step()
      end
      equal((w * w):sum():item() < 13 * 0.5, true, tostring(opt))
    end
    fails(function() optim.Adam({nn.Parameter(torch.ones(1))}, {betas = {0.9}}) end, 'betas must be a pair')
  end)
end)

describe('containers and module traversal', function()
  local Net = nn.Module:extend('ContainerNet')
  function Net:init()
    self.stem = nn.Linear(4, 8)
    self.blocks = nn.ModuleList{nn.Linear(8, 8), nn.Sequential{nn.Linear(8, 8), nn.ReLU()}}
    self.heads = nn.ModuleDict{{'cls', nn.Linear(8, 3)}, {'reg', nn.Linear(8, 1)}}
  end
  function Net:forward(x)
    x = self.stem(x)
    for _, block in ipairs(self.blocks) do x = block(x) end
    return self.heads.cls(x), self.heads.reg(x)
  end

  it('ModuleList and ModuleDict name children as PyTorch does', function()
    local net = Net()
    same(names(net), {'stem.weight', 'stem.bias', 'blocks.0.weight', 'blocks.0.bias',
                      'blocks.1.0.weight', 'blocks.1.0.bias', 'heads.cls.weight', 'heads.cls.bias',
                      'heads.reg.weight', 'heads.reg.bias'})
    equal(#net.blocks, 2)
    same(net.heads:keys(), {'cls', 'reg'})
    local a, b = net(torch.randn(5, 4))
    same(a:size(), {5, 3})
    same(b:size(), {5, 1})
    fails(function() return net.blocks[3] end, 'ModuleList index 3 is out of range 1..2')
    fails(function() net.blocks(torch.ones(1)) end, 'ModuleList has no forward')
    net.blocks:set(1, nn.Linear(8, 8, {bias = false}))
    equal(#names(net), 9)
  end)
  it('prints dims 1-based, as they were written', function()
    local s = tostring(nn.Sequential{nn.LogSoftmax(2), nn.Softmax(-1), nn.Flatten()})
    for _, part in ipairs({'LogSoftmax(dim=2)', 'Softmax(dim=-1)', 'Flatten(start_dim=2, end_dim=-1)'}) do
      equal(s:find(part, 1, true) ~= nil, true, s)
    end
  end)
  it('named_modules, children and apply walk the tree in PyTorch order', function()
    local net = Net()
    local paths = {}
    for name in net:named_modules() do paths[#paths + 1] = name end
    same(paths, {'', 'stem', 'blocks', 'blocks.0', 'blocks.1', 'blocks.1.0', 'blocks.1.1', 'heads',
                 'heads.cls', 'heads.reg'})
    equal(#net:children(), 3)
    local seen = 0
    net:apply(function(m) seen = seen + 1 end)
    equal(seen, 10)
    local seq = nn.Sequential{nn.Linear(2, 2), nn.ReLU()}
    equal(#seq:children(), 2)
    equal(seq.training, true)
    seq:eval()
    equal(seq.training, false)
    equal(seq[1].training, false)
  end)
end)

describe('layers with several inputs refuse bad ones in words', function()
  it('LSTM, MultiheadAttention and TransformerEncoderLayer', function()
    local lstm = nn.LSTM(3, 4)
    fails(function() lstm(torch.randn(5, 2, 3), 7) end, 'LSTM state {h, c} expected, got number')
    fails(function() lstm(torch.randn(5, 2, 3), {torch.zeros(1, 2, 4)}) end, 'element 2 is nil, expected a Tensor')
    fails(function() lstm(torch.randn(5, 2, 5)) end, 'Expected 3, got 5')
    fails(function() nn.MultiheadAttention(8, 2)(torch.randn(5, 2, 8), torch.randn(5, 2, 8)) end, "bad argument #4 to 'forward'")
    fails(function() nn.MultiheadAttention(8, 3) end, 'embed_dim 8 must be divisible by num_heads 3')
    fails(function() nn.TransformerEncoderLayer(8, 2, {norm_first = true}) end, 'norm_first = true is not available')
    fails(function() nn.Embedding(3, 2)(torch.tensor({0}, {dtype = 'int64'})) end, 'index 0 is out of range 1..3')
  end)
end)

describe('nn.init', function()
  it('fills in place with PyTorch\'s formulas', function()
    torch.manual_seed(1)
    local w = torch.empty(256, 512)
    equal(rawequal(nn.init.kaiming_normal_(w, {mode = 'fan_in', nonlinearity = 'relu'}), w), true)
    near(w:std():item(), math.sqrt(2 / 512), 0.002)
    nn.init.xavier_uniform_(w)
    local bound = math.sqrt(6 / (256 + 512))
    equal(w:abs():max():item() <= bound, true)
    near(w:abs():max():item(), bound, 0.01)
    nn.init.trunc_normal_(w, 0, 1, -0.5, 0.5)
    equal(w:abs():max():item() <= 0.5, true)
    nn.init.constant_(w, 0.25)
    equal(w:eq(0.25):all():item(), true)
    near(nn.init.calculate_gain('relu'), math.sqrt(2), 1e-12)
    nn.init.orthogonal_(w:narrow(1, 1, 64))
    local q = w:narrow(1, 1, 64)
    near((q:matmul(q:t()) - torch.eye(64)):abs():max():item(), 0, 1e-4)
    fails(function() nn.init.kaiming_normal_(w, {mode = 'fan_middle'}) end, "mode must be 'fan_in' or 'fan_out'")
    fails(function() nn.init.kaiming_uniform_(w, {nonlinearity = 'swish'}) end, "unknown nonlinearity 'swish'")
  end)
end)

describe('the zoo', function()
  it('builds models by id with the reference parameter counts', function()
    equal(nn.model('mlp'):num_parameters(), 269322)
    equal(nn.model('mnist_cnn'):num_parameters(), 1199882)
    same(nn.model('mnist_cnn')(torch.randn(2, 1, 28, 28)):size(), {2, 10})
    fails(function() nn.model('resnet9000') end, "unknown model 'resnet9000'", 'mlp, mnist_cnn')
  end)
end)

spec.finish()
