-- data: MNIST-style IDX sources written here at test time, pipelines, and corrupt files.
package.path = arg[0]:match('(.*/)') .. '?.lua;' .. package.path
local spec = require 'spec'
local torch, data = require 'torch', require 'data'
local describe, it, equal, same, fails = spec.describe, spec.it, spec.equal, spec.same_list, spec.fails

local dir = os.getenv('ENGINE_TEST_TMP') or '/tmp'
dir = dir .. '/data_spec'
os.execute('rm -rf "' .. dir .. '" && mkdir -p "' .. dir .. '"')

local function be32(n)
  return string.char(math.floor(n / 16777216) % 256, math.floor(n / 65536) % 256, math.floor(n / 256) % 256, n % 256)
end

local function write(path, bytes)
  local f = assert(io.open(path, 'wb'))
  f:write(bytes)
  f:close()
end

-- count images whose pixels are all equal to their index, labels index % 10.
local function write_mnist(folder, prefix, count, label_count)
  os.execute('mkdir -p "' .. folder .. '"')
  local images = {string.char(0, 0, 8, 3), be32(count), be32(28), be32(28)}
  for i = 0, count - 1 do images[#images + 1] = string.rep(string.char(i % 256), 784) end
  write(folder .. '/' .. prefix .. '-images-idx3-ubyte', table.concat(images))
  local labels = {string.char(0, 0, 8, 1), be32(label_count or count)}
  for i = 0, (label_count or count) - 1 do labels[#labels + 1] = string.char(i % 10) end
  write(folder .. '/' .. prefix .. '-labels-idx1-ubyte', table.concat(labels))
end

describe('data.mnist', function()
  local root = dir .. '/good'
  write_mnist(root, 'train', 25)
  write_mnist(root, 't10k', 10)

  it('yields 1x28x28 float images in [0, 1] and 1-based class targets', function()
    local ds = data.mnist{root = root, split = 'train'}:batch(10)
    equal(ds:size(), 3)
    equal(#ds, 3)
    local batches, seen = 0, 0
    for batch in ds:iter() do
      batches = batches + 1
      seen = seen + batch.input:size(1)
      same(batch.input:size(), {batch.input:size(1), 1, 28, 28})
      equal(batch.input:dtype(), 'float32')
      if batches == 1 then
        same(batch.target:totable(), {1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
        spec.near(batch.input[{2, 1, 1, 1}]:item(), 1 / 255, 1e-7)
      end
    end
    equal(batches, 3)
    equal(seen, 25)
  end)
  it('normalizes, shuffles by seed and epoch, and drops the last batch on request', function()
    local norm = data.normalize{mean = 0.5, std = 0.5}
    local ds = data.mnist{root = root, split = 'test'}:map(norm):shuffle():batch(4, {drop_last = true})
    equal(ds:size(), 2)
    local first = ds:iter{epoch = 1}()
    equal(first.input:min():item() >= -1, true)
    local again = ds:iter{epoch = 1}()
    same(first.target:totable(), again.target:totable())
    local other = ds:iter{epoch = 2}()
    equal(table.concat(first.target:totable(), ',') ~= table.concat(other.target:totable(), ','), true)
  end)
  it('refuses bad options', function()
    fails(function() data.mnist{root = root, split = 'validation'} end, "split must be 'train' or 'test'")
    fails(function() data.mnist{root = root, spilt = 'train'} end, "unknown option 'spilt'")
    fails(function() data.mnist{root = root}:batch(0) end, 'positive batch size')
  end)
end)

describe('corrupt files stop with a message naming the file', function()
  it('a truncated image file', function()
    local root = dir .. '/truncated'
    write_mnist(root, 'train', 5)
    local path = root .. '/train-images-idx3-ubyte'
    local f = assert(io.open(path, 'rb')); local bytes = f:read('*a'); f:close()
    write(path, bytes:sub(1, #bytes - 100))
    fails(function() data.mnist{root = root} end, path, 'truncated')
  end)
  it('a wrong magic number', function()
    local root = dir .. '/magic'
    write_mnist(root, 'train', 5)
    local path = root .. '/train-labels-idx1-ubyte'
    local f = assert(io.open(path, 'rb')); local bytes = f:read('*a'); f:close()
    write(path, 'PK' .. bytes:sub(3))
    fails(function() data.mnist{root = root} end, path, 'magic number')
  end)
  it('a label count that differs from the image count', function()
    local root = dir .. '/count'
    write_mnist(root, 'train', 6, 4)
    fails(function() data.mnist{root = root} end, root .. '/train-labels-idx1-ubyte', '4 labels', '6 images')
  end)
  it('a missing folder', function()
    fails(function() data.mnist{root = dir .. '/nowhere'} end, dir .. '/nowhere', 'does not exist')
  end)
end)

describe('data.find', function()
  it('lists where it looked and how to get the data', function()
    fails(function() data.find('no_such_dataset') end, "dataset 'no_such_dataset' not found", '/usr/share/datasets/no_such_dataset')
  end)
end)

describe('in-memory and synthetic sources', function()
  local function collect(ds, options)
    local inputs, targets = {}, {}
    for batch in ds:iter(options) do
      inputs[#inputs + 1] = batch.input
      targets[#targets + 1] = batch.target
    end
    return torch.cat(inputs, 1), torch.cat(targets, 1)
  end

  it('data.tensors serves its rows with 1-based class targets', function()
    local x = torch.arange(0, 12):view(6, 2):float()
    local y = torch.tensor({1, 2, 3, 1, 2, 3}, {dtype = 'int64'})
    local ds = data.tensors{input = x, target = y}:batch(4)
    equal(#ds, 2)
    local inputs, targets = collect(ds)
    equal(inputs:equal(x), true)
    equal(targets:equal(y), true)
    fails(function() data.tensors{target = y} end, "option 'input' (a tensor) is required")
    fails(function() data.tensors{input = x, target = y - 1} end, 'class targets are 1-based, found 0')
    fails(function() data.tensors{input = x, target = torch.ones(5, {dtype = 'int64'})} end, '6 inputs but target of shape [5]')
  end)

  it('data.synthetic is the same sample for the same seed and index, whatever the workers', function()
    local ds = data.synthetic{shape = {3, 4, 4}, classes = 5, size = 20, seed = 7}:shuffle():batch(6)
    equal(#ds, 4)
    local a_in, a_t = collect(ds:workers(1), {epoch = 2, seed = 1})
    local b_in, b_t = collect(ds:workers(3), {epoch = 2, seed = 1})
    same(a_in:size(), {20, 3, 4, 4})
    equal(a_in:equal(b_in), true)
    equal(a_t:equal(b_t), true)
    equal(a_t:min():item() >= 1 and a_t:max():item() <= 5, true)
    local other = collect(data.synthetic{shape = {3, 4, 4}, classes = 5, size = 20, seed = 8}:batch(20))
    equal(other:equal(a_in), false)
    spec.near(a_in:std():item(), 1, 0.2)
    fails(function() data.synthetic{classes = 3} end, "option 'shape' is required")
    fails(function() data.synthetic{shape = {3, 0}} end, 'shape [3, 0] has a size below 1')
  end)
end)

describe('take and shard', function()
  local x = torch.arange(1, 11):float():view(10, 1)
  local function values(ds, options)
    local out = {}
    for batch in ds:iter(options) do
      for _, v in ipairs(batch.input:view(-1):totable()) do out[#out + 1] = v end
    end
    return out
  end

  it('take keeps the first samples of each epoch, or the first batches once batched', function()
    same(values(data.tensors{input = x}:take(4):batch(3)), {1, 2, 3, 4})
    same(values(data.tensors{input = x}:batch(3):take(2)), {1, 2, 3, 4, 5, 6})
    equal(#data.tensors{input = x}:batch(3):take(2), 2)
    local shuffled = data.tensors{input = x}:shuffle()
    local all = values(shuffled:batch(10), {seed = 3})
    same(values(shuffled:take(4):batch(10), {seed = 3}), {all[1], all[2], all[3], all[4]})
    fails(function() data.tensors{input = x}:take(0) end, ':take expects a positive count')
  end)

  it('shard splits each epoch across ranks like DistributedSampler', function()
    local ds = data.tensors{input = x}:shuffle()
    local seen, sizes = {}, {}
    for rank = 0, 2 do
      local share = values(ds:shard(rank, 3):batch(2), {seed = 5, epoch = 2})
      sizes[#sizes + 1] = #share
      for _, v in ipairs(share) do seen[v] = (seen[v] or 0) + 1 end
    end
    same(sizes, {4, 4, 4})  -- ceil(10 / 3), the last two padded by wrapping around
    local total = 0
    for v = 1, 10 do
      equal(seen[v] ~= nil, true, 'sample ' .. v .. ' is in some shard')
      total = total + seen[v]
    end
    equal(total, 12)
    equal(#ds:shard(0, 3):batch(2), 2)
    fails(function() ds:shard(3, 3) end, ':shard(rank, world) needs 0 <= rank < world, got rank 3 of 3')
    fails(function() ds:shard(0, 2):shard(1, 2) end, ':shard applied twice')
  end)
end)

spec.finish()
