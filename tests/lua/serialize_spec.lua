-- torch.save / torch.load: tensors of every dtype and nested tables round-trip through HDF5.
package.path = arg[0]:match('(.*/)') .. '?.lua;' .. package.path
local spec = require 'spec'
local torch = require 'torch'
local describe, it, equal, same, fails = spec.describe, spec.it, spec.equal, spec.same_list, spec.fails

local dir = (os.getenv('ENGINE_TEST_TMP') or '/tmp') .. '/serialize_spec'
os.execute('rm -rf "' .. dir .. '" && mkdir -p "' .. dir .. '"')

describe('torch.save and torch.load', function()
  it('round-trip a tensor of every dtype, keeping dtype, shape and values', function()
    for _, dtype in ipairs({'float32', 'float64', 'float16', 'bfloat16', 'int8', 'int16', 'int32',
                            'int64', 'uint8', 'bool'}) do
      local t = torch.tensor({{1, 0, 3}, {4, 5, 0}}, {dtype = dtype})
      local path = dir .. '/' .. dtype .. '.h5'
      torch.save(path, t)
      local back = torch.load(path)
      equal(back:dtype(), dtype, dtype)
      same(back:size(), {2, 3}, dtype)
      equal(back:eq(t):all():item(), true, dtype)
    end
  end)
  it('round-trip nested tables, lists, numbers, strings and booleans', function()
    local value = {
      weights = {fc = torch.randn(3, 2), bias = torch.zeros(2)},
      steps = {torch.ones(1), torch.ones(2), torch.ones(3)},
      lr = 0.25, name = 'run', flag = true, scalar = torch.tensor(7),
    }
    local path = dir .. '/nested.h5'
    torch.save(path, value)
    local back = torch.load(path)
    equal(back.weights.fc:eq(value.weights.fc):all():item(), true)
    equal(#back.steps, 3)
    equal(back.steps[3]:numel(), 3)
    equal(back.lr, 0.25)
    equal(back.name, 'run')
    equal(back.flag, true)
    equal(back.scalar:dim(), 0)
    equal(back.scalar:item(), 7)
  end)
  it('saves a single number or string', function()
    torch.save(dir .. '/n.h5', 42)
    equal(torch.load(dir .. '/n.h5'), 42)
    torch.save(dir .. '/s.h5', 'hello')
    equal(torch.load(dir .. '/s.h5'), 'hello')
  end)
  it('refuses what it cannot store, naming where it is', function()
    fails(function() torch.save(dir .. '/f.h5', {a = {b = print}}) end, "cannot save a function (at 'a.b')")
    fails(function() torch.save(dir .. '/k.h5', {[1.5] = 1}) end, 'only string and integer keys')
    fails(function() torch.load(dir .. '/absent.h5') end, 'absent.h5')
    fails(function() torch.save(dir .. '/no/such/dir/x.h5', torch.ones(1)) end, 'x.h5')
  end)
end)

spec.finish()
