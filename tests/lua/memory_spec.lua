-- Memory of tensors held by Lua (docs/lua-api/tensor.md, "Memory"): the collector paced by
-- tensor memory, torch.scope / x:free() / x:keep(), torch.inference_mode, and the process's
-- allocator keeping resident memory flat over repeated forward passes.
local here = arg[0]:match('(.*/)')
package.path = here .. '?.lua;' .. package.path
local spec = require 'spec'
local torch, nn = require 'torch', require 'nn'

local RELEASED = 'a Tensor that was already released'
local SCOPE_RELEASED = 'a Tensor that was released when the torch.scope or the Lua module forward'

spec.describe('torch.scope', function()
  spec.it('releases the tensors made inside, keeps what it returns', function()
    local inside
    local a, b, c = torch.scope(function(x)
      inside = x * 2
      return x + 1, {nested = {x * 3}}, 'not a tensor'
    end, torch.ones(3))
    spec.equal(a:sum():item(), 6, 'returned tensor')
    spec.equal(b.nested[1]:sum():item(), 9, 'tensor inside a returned table')
    spec.equal(c, 'not a tensor')
    spec.fails(function() return inside + 1 end, SCOPE_RELEASED)
  end)

  spec.it('leaves arguments and tensors made before it alone', function()
    local x = torch.ones(2)
    torch.scope(function(y) local _ = y * 2 end, x)
    spec.equal(x:sum():item(), 2)
  end)

  spec.it('keeps x:keep() tensors and module fields', function()
    local kept, plain
    local Net = nn.Module:extend('ScopeNet')
    function Net:init()
      self.fc = nn.Linear(3, 2)
      self.scale = nn.Parameter(torch.ones(2))
      self.offset = torch.zeros(2)  -- a plain tensor field
      self:register_buffer('count', torch.zeros(1))
    end
    function Net:forward(x) return self.fc(x) * self.scale + self.offset end
    local net = torch.scope(function()
      kept = torch.ones(2):keep()
      plain = torch.ones(2)
      return Net()
    end)
    spec.equal(kept:sum():item(), 2, 'kept tensor')
    spec.fails(function() return plain + 1 end, SCOPE_RELEASED)
    local out = net(torch.ones(4, 3))
    spec.same_list(out:size(), {4, 2}, 'forward after the scope')
    spec.equal(net.count:sum():item(), 0, 'buffer field')
    local names = {}
    for name in net:named_parameters() do names[#names + 1] = name end
    table.sort(names)
    spec.same_list(names, {'fc.bias', 'fc.weight', 'scale'})
  end)

  spec.it('nests: an inner result belongs to the outer scope', function()
    local from_inner
    local outer = torch.scope(function()
      from_inner = torch.scope(function() return torch.ones(2) end)
      spec.equal(from_inner:sum():item(), 2, 'inside the outer scope')
      return torch.zeros(1)
    end)
    spec.equal(outer:numel(), 1)
    spec.fails(function() return from_inner + 1 end, SCOPE_RELEASED)
  end)

  spec.it('releases on error and raises the error', function()
    local made
    spec.fails(function()
      torch.scope(function()
        made = torch.ones(2)
        error('inside the scope')
      end)
    end, 'inside the scope')
    spec.fails(function() return made + 1 end, SCOPE_RELEASED)
  end)

  spec.it('trains a step inside a scope like outside it', function()
    local function run(scoped)
      torch.manual_seed(3)
      local model = nn.Sequential{nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3), nn.LogSoftmax(2)}
      local opt = require('optim').SGD(model:parameters(), {lr = 0.1, momentum = 0.9})
      local x, y = torch.randn(5, 4), torch.tensor({1, 2, 3, 1, 2}, {dtype = 'int64'})
      local loss_fn = nn.NLLLoss()
      local losses = {}
      for _ = 1, 5 do
        local function step()
          opt:zero_grad()
          local loss = loss_fn(model(x), y)
          loss:backward()
          opt:step()
          return loss:item()
        end
        losses[#losses + 1] = scoped and torch.scope(step) or step()
      end
      return losses, model:parameters()[1]:clone()
    end
    local plain_losses, plain_w = run(false)
    local scoped_losses, scoped_w = run(true)
    spec.same_list(scoped_losses, plain_losses, 'losses')
    spec.equal(torch.equal(plain_w, scoped_w), true, 'weights')
  end)

  spec.it('rejects a non-function', function()
    spec.fails(function() torch.scope(42) end, 'function expected')
  end)
end)

spec.describe('a Lua module that C++ calls', function()
  -- nn.Sequential calls its children from C++, as the trainer, evaluator and bench do
  local leaked, made
  local Net = nn.Module:extend('ReleasingNet')
  function Net:init()
    self.fc = nn.Linear(32, 256)
    self.history = {}      -- a plain table in a field: what goes in it must be kept
  end
  function Net:forward(x)
    local h = self.fc(x)
    leaked = h:relu()      -- only an upvalue holds it: released when forward returns
    self.last = h * 2      -- a module field: kept
    self.history[#self.history + 1] = h:sum():keep()
    return (h + 1):sum(2)
  end

  spec.it('releases what its forward made but its result and module fields', function()
    local net = Net()
    local out = nn.Sequential{net}(torch.ones(4, 32))
    spec.same_list(out:size(), {4})
    spec.near((net.last:sum(2) - (out - 256) * 2):abs():max():item(), 0, 1e-3, 'field kept')
    spec.fails(function() return leaked + 1 end, SCOPE_RELEASED, 'x:keep()')
    spec.near(net.history[1]:item(), (out - 256):sum():item(), 1e-2, 'kept in a table')
    -- called from Lua, forward leaves its tensors to the collector (torch.scope is the tool)
    net(torch.ones(4, 32))
    spec.equal(leaked:numel(), 4 * 256, 'called from Lua')
  end)

  spec.it('leaves Lua the result C++ took without its autograd graph', function()
    -- kept with its graph until a collection, it held every layer's saved activations and the
    -- parameters' gradient accumulators after the step (a CUDA graph then failed to record)
    local stashed
    local Stashing = nn.Module:extend('StashingNet')
    function Stashing:init() self.fc = nn.Linear(4, 2) end
    function Stashing:forward(x)
      stashed = self.fc(x)
      return stashed
    end
    local out = nn.Sequential{Stashing()}(torch.ones(3, 4))
    spec.equal(out:is_requires_grad(), true, 'what C++ passed on keeps its graph')
    spec.equal(stashed:is_requires_grad(), false, 'what Lua still reaches has none')
    spec.equal(torch.equal(stashed, out:detach()), true, 'the same values')
  end)

  spec.it('gives its forward pass memory back at once', function()
    local Plain = nn.Module:extend('PlainNet')
    function Plain:init() self.fc = nn.Linear(32, 256) end
    function Plain:forward(x) return (self.fc(x):relu() * 2):sum(2) end
    local seq = nn.Sequential{Plain()}
    local x = torch.ones(64, 32)
    torch.no_grad(function()
      local out = seq(x)
      out:free()
      collectgarbage()
      local before = torch.memory_stats()
      for _ = 1, 4 do seq(x):free() end
      local after = torch.memory_stats()
      -- each forward makes 3 tensors of 64 KiB; left to the collector, 768 KiB would wait
      spec.equal(after.paced_collections, before.paced_collections, 'no collection ran')
      local grown = after.cpu_tensor_bytes - before.cpu_tensor_bytes
      spec.equal(grown < 16 * 1024, true, 'CPU tensor memory grew by ' .. grown .. ' bytes')
    end)
  end)

  spec.it('releases what it made when forward raises, and raises the error', function()
    local Failing = nn.Module:extend('FailingNet')
    function Failing:forward(x)
      made = x * 2
      error('inside forward')
    end
    spec.fails(function() return nn.Sequential{Failing()}(torch.ones(2)) end, 'inside forward')
    spec.fails(function() return made + 1 end, SCOPE_RELEASED)
  end)
end)

-- A Lua-defined module's object and its C++ module hold each other; a registry reference kept
-- every model a state ever built (five VGG-16s in a loop: 2.9 GB).
spec.describe('a Lua-defined module nobody holds', function()
  local Big = nn.Module:extend('BigNet')
  function Big:init() self.fc = nn.Linear(1024, 1024) end  -- a 4 MiB weight
  function Big:forward(x) return self.fc(x) end
  local Outer = nn.Module:extend('OuterNet')
  function Outer:init()  -- three 4 MiB weights
    self.inner = Big()
    self.list = nn.ModuleList{Big()}
    self.seq = nn.Sequential{Big(), nn.ReLU()}
  end
  function Outer:forward(x) return self.seq(self.list[1](self.inner(x))) end
  local MiB = 2 ^ 20

  -- one collectgarbage() frees the whole nest, though a level that C++ held (its parent's,
  -- a container's) can only go in a collection after the level above it
  local collect = collectgarbage
  local function held_since(before)
    return torch.memory_stats().cpu_tensor_bytes - before
  end

  spec.it('is freed with its parameters', function()
    collect()
    local before = torch.memory_stats().cpu_tensor_bytes
    local nets = {}
    for i = 1, 5 do
      nets[i] = Outer()
      nets[i](torch.ones(2, 1024))
    end
    spec.equal(held_since(before) >= 5 * 12 * MiB, true, 'the five models were built')
    nets = nil
    collect()
    local held = held_since(before)
    spec.equal(held < MiB, true, 'five dropped models still hold ' .. held .. ' bytes')
  end)

  spec.it('lives while a C++ container holds it, and is freed with it', function()
    collect()
    local before = torch.memory_stats().cpu_tensor_bytes
    local seq = nn.Sequential{Outer(), nn.Sequential{Big()}}
    local first = seq(torch.ones(2, 1024))
    collect()  -- no script reaches the Lua objects now: C++ does
    spec.equal(torch.equal(seq(torch.ones(2, 1024)), first), true, 'the same forward')
    spec.equal(seq[1].inner.fc.weight:size(1), 1024, 'its fields')
    seq, first = nil, nil
    collect()
    local held = held_since(before)
    spec.equal(held < MiB, true, 'a dropped container still holds ' .. held .. ' bytes')
  end)
end)

spec.describe('collectgarbage', function()
  spec.it('keeps its other options', function()
    spec.equal(type(collectgarbage('count')), 'number', 'count')
    spec.equal(collectgarbage('collect'), 0, 'collect')
    spec.equal(type(collectgarbage('step', 1)), 'boolean', 'step')
    spec.fails(function() collectgarbage('nonsense') end, 'invalid option')
  end)
end)

spec.describe('x:free', function()
  spec.it('releases now; a second free is harmless', function()
    local x = torch.ones(4)
    local view = x:view(2, 2)
    x:free()
    x:free()
    spec.fails(function() return x:sum() end, RELEASED)
    spec.equal(view:sum():item(), 4, 'a view keeps the memory it shares')
  end)
  spec.it('of a parameter handle leaves the parameter', function()
    local layer = nn.Linear(2, 3)
    layer:parameters()[1]:free()
    spec.same_list(layer:parameters()[1]:size(), {3, 2})
    spec.same_list(layer(torch.ones(1, 2)):size(), {1, 3})
  end)
  spec.it('names a wrong argument', function()
    spec.fails(function() torch.ones(1).free(3) end, "bad argument #1 to 'free'", 'number')
  end)
end)

-- After 100 MiB of dead tensors: the collector ran, paced by their memory, and what they still
-- hold is under its threshold (and one tensor).
local function expect_paced(before, after, what)
  if after.paced_collections <= before.paced_collections then
    error('no paced collection over 100 MiB of ' .. what)
  end
  local held = after.cpu_tensor_bytes - before.cpu_tensor_bytes
  if held > after.collection_threshold_bytes + 2 * 2 ^ 20 then
    error(('dead tensors held %d bytes, threshold %d'):format(held,
          after.collection_threshold_bytes))
  end
end

spec.describe('pacing', function()
  spec.it('collects dead tensors by their memory', function()
    collectgarbage()
    local before = torch.memory_stats()
    for _ = 1, 100 do local _ = torch.ones(256, 1024) end  -- 1 MiB each, left to the collector
    expect_paced(before, torch.memory_stats(), 'dead tensors')
  end)

  -- A scope releases what is made inside when it closes, and its list keeps them alive until
  -- then: a collection could free none of them. Counted, they started a full collection after
  -- nearly every layer of a Lua module's forward on CUDA (ResNet-50 ran host-bound).
  spec.it('leaves tensors made inside a scope to the scope', function()
    collectgarbage()
    local before = torch.memory_stats().paced_collections
    torch.scope(function()
      for _ = 1, 100 do local _ = torch.ones(256, 1024) end  -- 100 MiB, released at the end
    end)
    spec.equal(torch.memory_stats().paced_collections, before, 'no collection ran in the scope')
    for _ = 1, 100 do local _ = torch.ones(256, 1024) end  -- outside: paced as before
    if torch.memory_stats().paced_collections <= before then
      error('no paced collection over 100 MiB of dead tensors outside a scope')
    end
  end)

  -- What a scope returns leaves it for code outside every scope: counted as made there. A loop
  -- of scoped steps that each return their output collected never, and faulted fresh pages in
  -- for every output.
  spec.it('counts what the outermost scope returns', function()
    collectgarbage()
    local before = torch.memory_stats()
    for _ = 1, 100 do
      local _ = torch.scope(function() return torch.ones(256, 1024) end)  -- 1 MiB, dead at once
    end
    expect_paced(before, torch.memory_stats(), 'dead tensors returned from scopes')
  end)

  spec.it('counts the autograd graphs small outputs keep alive', function()
    local before = torch.memory_stats().paced_collections
    local w = torch.ones(4):requires_grad()
    for _ = 1, 200 do local _ = (w * 2):sum() end  -- tiny tensors, each with a graph
    if torch.memory_stats().paced_collections <= before then
      error('no paced collection over 400 graph-carrying tensors')
    end
  end)

  -- Small dead tensors are set aside when collected and destroyed one per new tensor; counted
  -- as held, they raised the threshold after every collection, and a loop making one 2.5 KiB
  -- tensor a step was collected ever more rarely (3 collections in 4,000 steps, 2,000 dead).
  spec.it('keeps collecting small dead tensors at the same threshold', function()
    collectgarbage()
    local x = torch.ones(64, 10)
    local start = torch.memory_stats()
    local first_threshold
    -- 10 MiB of 2,560-byte tensors, left to the collector; little Lua garbage besides, so
    -- that LuaJIT's own collector does not find them first
    for i = 1, 4000 do
      local _ = x + 1
      if not first_threshold and i % 100 == 0 then
        local s = torch.memory_stats()
        if s.paced_collections > start.paced_collections then
          first_threshold = s.collection_threshold_bytes
        end
      end
    end
    local after = torch.memory_stats()
    local collections = after.paced_collections - start.paced_collections
    local expected = math.floor(10 * 2 ^ 20 / after.collection_threshold_bytes) - 2
    if collections < expected then
      error(('%d paced collections over 10 MiB of small dead tensors, threshold %d: expected %d')
            :format(collections, after.collection_threshold_bytes, expected))
    end
    if after.collection_threshold_bytes > 1.25 * first_threshold then
      error(('threshold grew from %d to %d'):format(first_threshold,
            after.collection_threshold_bytes))
    end
  end)

  spec.it('reports its figures', function()
    local s = torch.memory_stats()
    for _, key in ipairs({'cpu_tensor_bytes', 'lua_heap_bytes', 'paced_collections',
                          'collection_threshold_bytes', 'resident_bytes', 'peak_resident_bytes'}) do
      spec.equal(type(s[key]), 'number', key)
    end
    spec.equal(s.allocator, 'caching')
    if s.peak_resident_bytes < s.resident_bytes then error('peak below current') end
  end)
end)

spec.describe('torch.inference_mode', function()
  spec.it('runs a forward pass without autograd and returns its results', function()
    local layer = nn.Linear(3, 2)
    local out, n = torch.inference_mode(function(x) return layer(x), 7 end, torch.ones(4, 3))
    spec.same_list(out:size(), {4, 2})
    spec.equal(out:is_requires_grad(), false)
    spec.equal(n, 7)
  end)
  spec.it('raises errors from inside', function()
    spec.fails(function() torch.inference_mode(function() error('boom') end) end, 'boom')
  end)
end)

spec.describe('the allocator', function()
  -- mnist_cnn's forward pass under no_grad frees and asks for its large activations in an
  -- order where libtorch's posix_memalign blocks never fit their own holes: the heap grew by a
  -- block per pass (docs/performance.md). Resident memory must stay flat.
  spec.it('keeps resident memory flat over repeated no_grad forward passes', function()
    local net = nn.model('mnist_cnn')
    net:eval()
    local x = torch.randn(64, 1, 28, 28)
    local function passes(n)
      for _ = 1, n do torch.no_grad(function() local _ = net(x) end) end
    end
    passes(5)
    local start = torch.memory_stats().resident_bytes
    passes(30)
    local grown = torch.memory_stats().resident_bytes - start
    if grown > 64 * 2 ^ 20 then
      error(('resident memory grew by %.0f MiB over 30 passes'):format(grown / 2 ^ 20))
    end
  end)
end)

spec.finish()
