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

local function sorted_keys(t)
  local out = {}
  for k in pairs(t) do out[#out + 1] = k end
  table.sort(out)
  return out
end

describe('zoo models with a torchvision counterpart', function()
  for _, id in ipairs(sorted_keys(torchvision)) do
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
    for _, id in ipairs(sorted_keys(zoo)) do
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
    for _, id in ipairs({'alexnet', 'alexnet_owt', 'resnet18', 'resnet50', 'vgg11'}) do
      local entry = zoo[id]
      local model = nn.model(id, {num_classes = 7})
      model:eval()
      local shape = {1, entry.input[1], entry.input[2], entry.input[3]}
      same(model(torch.randn(shape)):size(), {1, 7}, id)
    end
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
