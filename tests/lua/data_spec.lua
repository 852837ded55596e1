-- data: MNIST-style IDX sources written here at test time, pipelines, and corrupt files.
package.path = arg[0]:match('(.*/)') .. '?.lua;' .. package.path
local spec = require 'spec'
local torch, data = require 'torch', require 'data'
local describe, it, equal, same, fails = spec.describe, spec.it, spec.equal, spec.same_list, spec.fails
local near = spec.near
local unpack = table.unpack or unpack

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

  it('data.tensors and data.hdf5 carry further named inputs row for row', function()
    local x = torch.arange(0, 12):view(6, 2):float()
    local text = torch.arange(1, 19):view(6, 3):long()
    local y = torch.tensor({1, 2, 3, 1, 2, 3}, {dtype = 'int64'})
    local ds = data.tensors{input = x, inputs = {text = text}, target = y}:shuffle():batch(4)
    local seen = 0
    for batch in ds:iter() do
      -- the rows stay together whatever the order: text row i is 3i-2..3i, input row i 2i-2, 2i-1
      equal(batch.text:size(2), 3)
      equal(batch.text:select(2, 1):equal((batch.input:select(2, 1) * 1.5 + 1):long()), true)
      seen = seen + batch.text:size(1)
    end
    equal(seen, 6)
    equal(tostring(data.tensors{input = x, inputs = {text = text}}):find('text %[3%]') ~= nil, true)
    fails(function() data.tensors{input = x, inputs = {text = text:narrow(1, 1, 5)}} end,
      "input 'text' of shape [5, 3] does not have 6 rows")
    fails(function() data.tensors{input = x, inputs = {target = text}} end, 'inputs.target: a batch\'s own field')
    fails(function() data.tensors{input = x, inputs = {text = 'words'}} end, 'inputs.text must be a tensor, got string')
    fails(function() data.tensors{input = x, inputs = {text}} end, 'takes names as keys')
    fails(function() data.tensors{input = x, inputs = text} end, "option 'inputs' must be a table")
    local path = dir .. '/two_inputs.h5'
    torch.save(path, {x = x, tokens = text, y = y - 1, short = text:narrow(1, 1, 4)})
    local rows = data.hdf5{path = path, input = '/x', target = '/y', inputs = {text = '/tokens'}}:batch(6)
    for batch in rows:iter() do
      equal(batch.input:equal(x), true)
      equal(batch.text:equal(text), true)
      equal(batch.target:equal(y), true)
    end
    fails(function() data.hdf5{path = path, input = '/x', inputs = {text = '/short'}} end, '4 rows but')
    fails(function() data.hdf5{path = path, input = '/x', inputs = {text = '/nothing'}} end, '/nothing')
    fails(function() data.hdf5{path = path, input = '/x', inputs = {text = 3}} end, "inputs.text must be a dataset path")
  end)

  it('data.synthetic is the same sample for the same seed and index, whatever the workers', function()
    local ds = data.synthetic{shape = {3, 4, 4}, classes = 5, size = 20, seed = 7}:shuffle():batch(6)
    equal(#ds, 4)
    local a_in, a_t = collect(ds:workers(1), {epoch = 2, seed = 1})
    local b_in, b_t = collect(ds:workers(3), {epoch = 2, seed = 1})
    local c_in, c_t = collect(ds:workers(0), {epoch = 2, seed = 1})  -- on this thread
    same(a_in:size(), {20, 3, 4, 4})
    equal(a_in:equal(b_in), true)
    equal(a_t:equal(b_t), true)
    equal(a_in:equal(c_in), true)
    equal(a_t:equal(c_t), true)
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

  it('split holds out disjoint parts of one source, the same every time', function()
    local ds = data.tensors{input = x}
    local train, valid = ds:split{0.8, 0.2}
    equal(#train, 8)
    equal(#valid, 2)
    local a, b = values(train:batch(10)), values(valid:batch(10))
    local seen = {}
    for _, v in ipairs(a) do seen[v] = true end
    for _, v in ipairs(b) do equal(seen[v], nil, 'sample ' .. v .. ' is in both parts') end
    equal(#a + #b, 10)
    -- the same seed, the same parts (a resumed run reads what it trained on)
    local again_train, again_valid = ds:split{0.8, 0.2}
    same(values(again_train:batch(10)), a)
    same(values(again_valid:batch(10)), b)
    local _, other = ds:split{0.8, 0.2, seed = 9}
    equal(table.concat(values(other:batch(10)), ',') ~= table.concat(b, ','), true, 'another seed')
    -- counts, three parts, and the stages before the split kept on each
    local p1, p2, p3 = ds:map(data.normalize{mean = 1, std = 1}):split{5, 3, 2}
    equal(#p1 + #p2 + #p3, 10)
    for _, v in ipairs(values(p3:batch(10))) do equal(v >= 0 and v <= 9, true) end
    equal(tostring(p2):find('split 2 of 3: 3 samples', 1, true) ~= nil, true)
    fails(function() ds:split{0.9} end, ':split takes two or more sizes')
    fails(function() ds:split{0.7, 0.5} end, ":split's fractions sum to 1.2")
    fails(function() ds:split{8, 5} end, ':split asks for 13 samples of a source of 10')
    fails(function() ds:batch(2):split{0.5, 0.5} end, 'call it before :batch')
    fails(function() ds:split{0.5, 0.5, sed = 1} end, "split takes sizes (numbers) and 'seed', got key string 'sed'")
  end)
end)

describe('Fashion-MNIST from Debian\'s dataset-fashion-mnist, end to end', function()
  local root = data.find('fashion-mnist')
  local function scan(split)
    local count, histogram, first = 0, {}, nil
    for batch in data.mnist{root = root, split = split}:batch(10000):iter() do
      if not first then first = {image = batch.input[1], labels = batch.target:narrow(1, 1, 5):totable()} end
      count = count + batch.target:size(1)
      for _, c in ipairs(batch.target:totable()) do histogram[c] = (histogram[c] or 0) + 1 end
    end
    return count, histogram, first
  end

  it('has 60000 training images, 6000 per class, and the known first image', function()
    local count, histogram, first = scan('train')
    equal(count, 60000)
    for c = 1, 10 do equal(histogram[c], 6000, 'class ' .. c) end
    same(first.labels, {10, 1, 1, 4, 1})
    local pixels = first.image:mul(255):round():view(-1)
    -- checksums of the raw bytes computed with numpy from the same files
    equal(pixels:sum():item(), 76247)
    equal(pixels:double():dot(torch.arange(1, 785):double()):item(), 35954273)
  end)

  it('has 10000 test images, 1000 per class', function()
    local count, histogram, first = scan('test')
    equal(count, 10000)
    for c = 1, 10 do equal(histogram[c], 1000, 'class ' .. c) end
    same(first.labels, {10, 3, 2, 2, 7})
    equal(first.image:mul(255):round():sum():item(), 33456)
  end)
end)

describe('CIFAR binary batches', function()
  it('reads records written here and refuses a truncated file', function()
    local folder = dir .. '/cifar-10-batches-bin'
    os.execute('mkdir -p "' .. folder .. '"')
    local function records(labels)
      local out = {}
      for _, label in ipairs(labels) do out[#out + 1] = string.char(label) .. string.rep(string.char(label * 20), 3072) end
      return table.concat(out)
    end
    for b = 1, 5 do write(folder .. '/data_batch_' .. b .. '.bin', records({b, 0})) end
    write(folder .. '/test_batch.bin', records({9}))
    local train = data.cifar10{root = dir}
    equal(#train, 10)
    local batch = train:batch(10):iter()()
    same(batch.input:size(), {10, 3, 32, 32})
    same(batch.target:totable(), {2, 1, 3, 1, 4, 1, 5, 1, 6, 1})
    near(batch.input[1]:max():item(), 20 / 255, 1e-6)
    equal(#data.cifar10{root = folder, split = 'test'}, 1)
    write(folder .. '/test_batch.bin', records({9}):sub(1, 3000))
    fails(function() data.cifar10{root = dir, split = 'test'} end, folder .. '/test_batch.bin: 3000 bytes')
    fails(function() data.cifar100{root = dir} end, 'train.bin not found')
  end)
end)

describe('image transforms', function()
  local images = torch.rand(6, 3, 20, 16)
  local base = data.tensors{input = images, target = torch.arange(1, 7)}

  it('resize, crops and flips give torchvision\'s shapes', function()
    local function first(ds) return ds:batch(6):iter()().input end
    same(first(base:map(data.resize(10))):size(), {6, 3, 12, 10})
    same(first(base:map(data.resize{8, 9})):size(), {6, 3, 8, 9})
    same(first(base:map(data.center_crop(8))):size(), {6, 3, 8, 8})
    same(first(base:map(data.random_crop(16, {padding = 2}))):size(), {6, 3, 16, 16})
    same(first(base:map(data.random_resized_crop{7, 5})):size(), {6, 3, 7, 5})
    local flipped = first(base:map(data.random_flip{p = 1}))
    equal(flipped[2][3][4][1]:item(), images[2][3][4][16]:item())
    equal(flipped[2][3][4][16]:item(), images[2][3][4][1]:item())
    equal(torch.equal(first(base:map(data.random_flip{p = 0})), images), true)
  end)

  it('random draws depend on seed, epoch and sample only', function()
    local augment = data.compose{data.random_resized_crop(8, {scale = {0.3, 1}}), data.random_flip()}
    local ds = base:map(augment):shuffle()
    local a = ds:batch(6):workers(1):iter{seed = 4}().input
    local b = torch.cat({ds:batch(2):workers(3):iter{seed = 4}().input}, 1)
    local again = {}
    for batch in ds:batch(2):workers(3):iter{seed = 4} do again[#again + 1] = batch.input end
    equal(torch.equal(a, torch.cat(again, 1)), true)
    equal(torch.equal(a, ds:batch(6):iter{seed = 4, epoch = 2}().input), false)
    equal(tostring(ds):find('compose(random_resized_crop(8x8), random_flip(p=0.5))', 1, true) ~= nil, true)
  end)

  it('to_float, one_hot and bad arguments', function()
    local t = data.tensors{input = torch.rand(2, 2), target = torch.tensor({1, 3}):long()}
    local batch = t:map(data.one_hot(3)):batch(2):iter()()
    same(batch.target:view(-1):totable(), {1, 0, 0, 0, 0, 1})
    same(batch.target:size(), {2, 3})
    fails(function() data.compose{data.to_float(), 3} end, 'data.compose: element 2 is not a transform')
    fails(function() data.center_crop{1, 2, 3} end, 'data.center_crop: size needs 1 or 2 values, got 3')
    fails(function() data.random_resized_crop(8, {scale = {0.9, 0.1}}) end, 'scale must be {min, max}')
    fails(function() t:map(data.random_crop(5)):batch(2):iter()() end, 'data.random_crop: expects images')
  end)
end)

describe('data.csv', function()
  local train_path, test_path = dir .. '/train.csv', dir .. '/test.csv'
  write(train_path, 'age,city,income\n20,paris,low\n30,rome,high\n40,paris,low\n50,oslo,high\n')
  write(test_path, 'age,city,income\n35,lima,high\n,rome,low\n')

  it('standardises numbers and maps categories through the training split', function()
    local train = data.csv{path = train_path, target = 'income'}
    same(train:classes(), {'high', 'low'})
    local stats = train:stats()
    equal(stats.numeric[1].name, 'age')
    near(stats.numeric[1].mean, 35, 1e-12)
    same(stats.categorical[1].values, {'oslo', 'paris', 'rome'})
    equal(stats.categorical[1].cardinality, 4)
    local batch = train:batch(4):iter()()
    same(batch.input:size(), {4, 1})
    same(batch.categorical:view(-1):totable(), {2, 3, 2, 1})  -- 1-based, as nn.Embedding takes them
    same(batch.target:totable(), {2, 1, 2, 1})

    local test = data.csv{path = test_path, target = 'income', stats = train, missing = 'fill'}
    local t = test:batch(2):iter()()
    same(t.categorical:view(-1):totable(), {4, 3})  -- lima is out of vocabulary: index 4
    near(t.input[2][1]:item(), 0, 1e-6)             -- a missing number becomes the training mean
    same(t.target:totable(), {1, 2})
  end)

  it('statistics survive torch.save and torch.load as a plain table', function()
    local train = data.csv{path = train_path, target = 'income'}
    local path = dir .. '/stats.h5'
    torch.save(path, train:stats())
    local test = data.csv{path = test_path, target = 'income', stats = torch.load(path), missing = 'skip'}
    equal(#test, 1)
    local a = data.csv{path = test_path, target = 'income', stats = train, missing = 'skip'}:batch(1):iter()()
    local b = test:batch(1):iter()()
    equal(torch.equal(a.input, b.input), true)
    equal(torch.equal(a.categorical, b.categorical), true)
  end)

  it('names the file, line and column of bad input', function()
    fails(function() data.csv{path = test_path, target = 'income'} end, test_path .. ':3: column \'age\' is missing',
      "missing = 'fill' or 'skip'")
    local bad = dir .. '/bad.csv'
    write(bad, 'a,b\n1,x\n2\n')
    fails(function() data.csv{path = bad, target = 'b'} end, bad .. ':3: 1 fields, expected 2')
    equal(#data.csv{path = bad, target = 'b', skip_bad = true}, 1)
    fails(function() data.csv{path = bad, target = 'c', skip_bad = true} end, "no column 'c' (target)")
    fails(function() data.csv{path = bad, target = 'b', missing = 'maybe'} end, "missing must be 'error', 'fill' or 'skip'")
    fails(function() data.csv{path = bad, target = 'b', stats = {}} end, "option 'stats': field 'target' must be a string")
    fails(function() data.tensors{input = torch.zeros(1)}:stats() end, 'only data.csv pipelines')
  end)
end)

describe('data.hdf5', function()
  it('reads rows of datasets written by torch.save, class targets 0-based in the file', function()
    local path = dir .. '/rows.h5'
    torch.save(path, {x = torch.arange(0, 40):float():view(10, 4), y = torch.arange(0, 10):remainder(3)})
    local ds = data.hdf5{path = path, input = '/x', target = '/y'}
    equal(#ds, 10)
    local batch = ds:shuffle():batch(10):iter{seed = 2}()
    local seen = {}
    for i = 1, 10 do
      local row = batch.input[i][1]:item() / 4
      seen[row] = true
      equal(batch.target[i]:item(), row % 3 + 1)
    end
    for row = 0, 9 do equal(seen[row], true) end
    fails(function() data.hdf5{path = path, input = '/nothing'} end, path .. ": no dataset '/nothing'")
    fails(function() data.hdf5{path = dir .. '/none.h5'} end, 'does not exist')
  end)
end)

describe('resuming an epoch at any sample', function()
  it('iter{skip = k} continues exactly where an uninterrupted epoch would be', function()
    local ds = data.tensors{input = torch.arange(1, 21):float():view(20, 1)}:shuffle():batch(6)
    local all = {}
    for batch in ds:iter{seed = 9, epoch = 3} do
      for _, v in ipairs(batch.input:view(-1):totable()) do all[#all + 1] = v end
    end
    local rest, sizes = {}, {}
    for batch in ds:iter{seed = 9, epoch = 3, skip = 8} do
      sizes[#sizes + 1] = batch.input:size(1)
      for _, v in ipairs(batch.input:view(-1):totable()) do rest[#rest + 1] = v end
    end
    same(rest, {unpack(all, 9)})
    same(sizes, {4, 6, 2})
    fails(function() ds:iter{skip = -1} end, 'skip must be >= 0')
  end)
end)

describe('image folders', function()
  it('refuse a missing or empty root with its path', function()
    fails(function() data.image_folder{root = dir .. '/no-such'} end, dir .. '/no-such is not a folder')
    os.execute('mkdir -p "' .. dir .. '/empty-root"')
    fails(function() data.image_folder{root = dir .. '/empty-root'} end, 'has no class folders')
    fails(function() data.image_folder{root = dir, mode = 'cmyk'} end, "mode must be 'rgb' or 'gray'")
  end)
end)

describe('single images', function()
  local function close(a, b, tolerance) near((a - b):abs():max():item(), 0, tolerance) end
  it('save_image and load_image round-trip PNG exactly, JPEG closely, gray and RGB', function()
    local rgb = torch.arange(0, 3 * 4 * 5):float():view(3, 4, 5):div(59)
    data.save_image(dir .. '/rgb.png', rgb)
    local back = data.load_image(dir .. '/rgb.png')
    same(back:size(), {3, 4, 5})
    close(back, rgb:mul(255):round():div(255), 1e-6)
    local gray = torch.arange(0, 12):view(3, 4):mul(20):byte()  -- H x W uint8: one channel
    data.save_image(dir .. '/gray.PNG', gray)
    local g = data.load_image(dir .. '/gray.PNG', {mode = 'gray'})
    same(g:size(), {1, 3, 4})
    close(g:mul(255):round(), gray:float():view(1, 3, 4), 0)
    local flat = torch.ones(3, 16, 16):mul(0.5)
    data.save_image(dir .. '/flat.jpg', flat)
    close(data.load_image(dir .. '/flat.jpg'), flat, 0.01)
    same(data.load_image(dir .. '/flat.jpg', {mode = 'gray'}):size(), {1, 16, 16})
  end)
  it('name the file or the shape at fault', function()
    fails(function() data.save_image(dir .. '/x.bmp', torch.zeros(3, 2, 2)) end,
      'x.bmp: the name must end in .png, .jpg or .jpeg')
    fails(function() data.save_image(dir .. '/x.png', torch.zeros(2, 2, 2)) end,
      'with 1 or 3 channels, got a tensor of shape [2, 2, 2]')
    fails(function() data.load_image(dir .. '/missing.png') end, 'missing.png: cannot open')
    local f = io.open(dir .. '/text.png', 'w'); f:write('hello'); f:close()
    fails(function() data.load_image(dir .. '/text.png') end, 'text.png: neither a JPEG nor a PNG')
    fails(function() data.load_image(dir .. '/rgb.png', {mode = 'cmyk'}) end, "mode must be 'rgb' or 'gray'")
  end)
end)

spec.finish()
