-- The model zoo: every id builds; the models torchvision also has match its parameter counts,
-- state_dict names and shapes (tests/fixtures/torchvision_models.lua, generated from
-- torchvision), so its checkpoints load; each family runs forward and round-trips its state.
local here = arg[0]:match('(.*/)')
package.path = here .. '?.lua;' .. package.path
local spec = require 'spec'
local torch, nn = require 'torch', require 'nn'
local describe, it, equal, same = spec.describe, spec.it, spec.equal, spec.same_list

local torchvision = dofile(here .. '../fixtures/torchvision_models.lua')
local zoo = require 'zoo'

describe('zoo models with a torchvision counterpart', function()
  for _, id in ipairs(spec.sorted_keys(torchvision)) do
    it(id .. ' has torchvision\'s parameter count, state_dict names and shapes', function()
      local expected = torchvision[id]
      local model = nn.model(id)
      equal(model:num_parameters(), expected.parameters, id .. ' parameters')
      local state = model:state_dict()
      local expected_names = {}
      for _, entry in ipairs(expected.state) do
        local name, shape = entry[1], entry[2]
        expected_names[name] = true
        if not state[name] then error(id .. ': missing ' .. name, 0) end
        same(state[name]:size(), shape, id .. ' ' .. name)
      end
      for name in pairs(state) do
        if not expected_names[name] then error(id .. ': torchvision has no ' .. name, 0) end
      end
      -- parameters come in torchvision's order too (optimizer state and checkpoints rely on it)
      local order, i = {}, 0
      for _, entry in ipairs(expected.state) do order[entry[1]] = true end
      local params = {}
      for name in model:named_parameters() do params[#params + 1] = name end
      for _, entry in ipairs(expected.state) do
        if entry[1] == params[i + 1] then i = i + 1 end
      end
      equal(i, #params, id .. ': named_parameters follow torchvision\'s order')
    end)
  end
end)

describe('every zoo id', function()
  it('builds, and the zoo index gives input shapes and classes', function()
    for _, id in ipairs(spec.sorted_keys(zoo)) do
      local entry = zoo[id]
      equal(type(entry.input), 'table', id)
      equal(type(entry.classes), 'number', id)
      if id ~= 'resnet200' and id ~= 'resnet269' then  -- the two largest, built below
        equal(nn.model(id):num_parameters() > 0, true, id)
      end
    end
  end)
  it('runs forward on a small batch of the documented input shape', function()
    torch.manual_seed(0)
    for _, id in ipairs({'alexnet', 'alexnet_owt', 'resnet18', 'resnet50', 'vgg11', 'lenet5',
                         'deep_mnist', 'sensor_net', 'acoustic_model', 'mnist_cnn', 'mlp', 'googlenet',
                         'inception3', 'inception4'}) do
      local entry = zoo[id]
      local model = nn.model(id, {num_classes = 7})
      model:eval()
      local shape = {1}
      for _, size in ipairs(entry.input) do shape[#shape + 1] = size end
      same(model(torch.randn(shape)):size(), {1, 7}, id)
    end
  end)
  it('CIFAR ResNets have the paper\'s parameter counts (option A shortcuts)', function()
    -- He et al. 2016, table 6: resnet20 0.27M, resnet56 0.85M; exact counts with BatchNorm
    equal(nn.model('resnet20_cifar'):num_parameters(), 269722)
    equal(nn.model('resnet56_cifar'):num_parameters(), 853018)
    local out = nn.model('resnet20_cifar', {num_classes = 7})(torch.randn(2, 3, 32, 32))
    same(out:size(), {2, 7})
  end)
  it('DLBS\'s fully connected networks have its layer widths', function()
    local function count(widths)
      local n = 0
      for i = 1, #widths - 1 do n = n + widths[i] * widths[i + 1] + widths[i + 1] end
      return n
    end
    equal(nn.model('deep_mnist'):num_parameters(), count({784, 2500, 2000, 1500, 1000, 500, 10}))
    equal(nn.model('sensor_net'):num_parameters(), count({784, 1024, 1024, 1024, 16}))
    equal(nn.model('acoustic_model'):num_parameters(), count({540, 2048, 2048, 2048, 2048, 2048, 8192}))
  end)
  it('gpt is causal: a token changes no earlier output', function()
    torch.manual_seed(2)
    local model = nn.model('gpt', {vocab_size = 50, context = 12, layers = 2, heads = 2, width = 16})
    model:eval()
    local tokens = torch.randint(1, 51, {2, 12})
    local before = model(tokens)
    same(before:size(), {2, 12, 50})
    local changed = tokens:clone()
    changed[{{}, 8}] = (changed[{{}, 8}] % 50) + 1
    local after = model(changed)
    equal(after:narrow(2, 1, 7):equal(before:narrow(2, 1, 7)), true)
    equal(after:narrow(2, 8, 1):equal(before:narrow(2, 8, 1)), false)
    spec.fails(function() model(torch.randint(1, 51, {1, 13})) end, 'longer than the context of 12')
  end)
  it('wide_deep takes categorical, numeric and crossed columns', function()
    local model = nn.model('wide_deep', {categorical = {5, 3}, numeric = 2, crossed = 10, num_classes = 3})
    local cat = torch.tensor({{1, 3}, {5, 1}}, {dtype = 'int64'})
    local crossed = torch.tensor({{1, 10}, {4, 4}}, {dtype = 'int64'})
    same(model(cat, torch.randn(2, 2), crossed):size(), {2, 3})
    same(model{categorical = cat, numeric = torch.randn(2, 2), crossed = crossed}:size(), {2, 3})
    spec.fails(function() model(torch.ones(2, 3, {dtype = 'int64'}), torch.randn(2, 2), crossed) end,
      'categorical must be N x 2 ids')
    spec.fails(function() model(torch.tensor({{6, 1}}, {dtype = 'int64'}), torch.randn(1, 2), crossed:narrow(1, 1, 1)) end,
      'index 6 is out of range 1..5')
  end)
  it('wide_deep crosses columns itself and takes a data.csv batch as it is', function()
    local model = nn.model('wide_deep', {categorical = {5, 3, 4}, numeric = 2, crosses = {{1, 2}, {2, 3}},
                                         num_classes = 3})
    equal(model.buckets, 5 * 3 + 3 * 4)
    local cat = torch.tensor({{1, 1, 1}, {5, 3, 4}, {2, 3, 1}}, {dtype = 'int64'})
    -- mixed-radix ids, the second cross after the first one's 15 buckets
    equal(model:cross(cat):equal(torch.tensor({{1, 16}, {15, 27}, {6, 24}}, {dtype = 'int64'})), true)
    local numeric = torch.randn(3, 2)
    local out = model{input = numeric, categorical = cat}
    same(out:size(), {3, 3})
    equal(out:equal(model(cat, numeric, model:cross(cat))), true)
    local example = model:example_input(4)
    same(example.categorical:size(), {4, 3})
    equal(example.crossed, nil)
    same(model(example):size(), {4, 3})
    spec.fails(function() nn.model('wide_deep', {categorical = {5, 3}, crosses = {{1, 3}}}) end,
      'crosses[1] names categorical column 3; there are 2')
    spec.fails(function() nn.model('wide_deep', {categorical = {5, 3}})(cat:narrow(2, 1, 2), torch.randn(3, 5)) end,
      'forward needs crossed bucket ids, or the option crosses')
  end)
  it('resnet200 and resnet269 build with DLBS\'s depths', function()
    local counts = {}
    for _, id in ipairs({'resnet200', 'resnet269'}) do
      local blocks, model = 0, nn.model(id)
      for name in model:named_modules() do
        if name:match('^layer%d%.%d+$') then blocks = blocks + 1 end
      end
      counts[id] = blocks
    end
    equal(counts.resnet200, 3 + 24 + 36 + 3)
    equal(counts.resnet269, 3 + 30 + 48 + 8)
  end)
  it('a state_dict round trip gives identical outputs', function()
    torch.manual_seed(1)
    local a, b = nn.model('resnet18', {num_classes = 5}), nn.model('resnet18', {num_classes = 5})
    a:eval(); b:eval()
    local x = torch.randn(2, 3, 64, 64)
    equal(a(x):equal(b(x)), false)
    local path = (os.getenv('ENGINE_TEST_TMP') or '/tmp') .. '/zoo_resnet18.h5'
    torch.save(path, a:state_dict())
    b:load_state_dict(torch.load(path))
    equal(a(x):equal(b(x)), true)
    os.remove(path)
  end)
end)

spec.finish()
