-- Writes docs/lua-api/coverage.md: every name the engine's Lua libraries offer, with the PyTorch
-- name it stands for and what differs (from the binding tables the libraries are built from,
-- through engine.surface), and how much of the reference list (tests/surface/reference_names.tsv:
-- the names pytorch/examples and torchvision.models call) is available.
--   engine run tests/surface/coverage.lua --write   rewrites the page
--   engine run tests/surface/coverage.lua           fails when the page is not current, or when
--                                                    less than 95% of the reference is available
local torch, nn, optim = require 'torch', require 'nn', require 'optim'
local engine = require 'engine'
local core = require 'nn.core'

local here = arg[0]:match('(.*/)') or './'
local page_path = here .. '../../docs/lua-api/coverage.md'
local reference_path = here .. 'reference_names.tsv'
local kTarget = 0.95

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do if type(k) == 'string' then keys[#keys + 1] = k end end
  table.sort(keys)
  return keys
end

-- Every name the libraries hold: {library, shown, pytorch, note}
local function engine_names()
  local rows = {}
  local function add(label, shown, name, value)
    local pytorch, note = engine.surface.describe(label, name, value)
    rows[#rows + 1] = {library = label, shown = shown, pytorch = pytorch, note = note}
  end
  local function functions(label, prefix, t)
    for _, name in ipairs(sorted_keys(t)) do
      local v = rawget(t, name)
      if type(v) == 'function' then add(label, prefix .. name, name, v) end
    end
  end
  -- torch, its dtype names, torch.linalg and torch.autograd
  functions('torch', 'torch.', torch)
  for _, name in ipairs(sorted_keys(torch)) do
    if type(rawget(torch, name)) == 'string' then add('torch', 'torch.' .. name, name) end
  end
  functions('torch.linalg', 'torch.linalg.', torch.linalg)
  functions('torch.autograd', 'torch.autograd.', torch.autograd)
  -- tensors: methods, then attributes
  functions('Tensor', 'x:', getmetatable(torch.ones(1)).__methods)
  for _, name in ipairs(engine.surface.tensor_fields()) do add('Tensor', 'x.' .. name, name) end
  -- nn: layers (classes over the C constructors), losses, nn.lua's own, and its sub-libraries
  for _, name in ipairs(sorted_keys(nn)) do
    local v = rawget(nn, name)
    if type(v) == 'function' then
      add('nn', 'nn.' .. name, name, v)
    elseif type(v) == 'table' and rawget(v, '__classname') then
      add('nn', 'nn.' .. name, name, rawget(core, name))
    end
  end
  functions('nn.F', 'nn.F.', nn.F)
  functions('nn.init', 'nn.init.', nn.init)
  functions('nn.utils', 'nn.utils.', nn.utils)
  -- modules: the methods of built-in layers (C and nn.lua's), those of Lua modules, attributes
  local methods = {}
  for name, v in pairs(getmetatable(nn.Identity()).__methods) do methods[name] = v end
  for name, v in pairs(nn.Module) do
    if type(v) == 'function' and methods[name] == nil and not name:match('^__') then
      methods[name] = v
    end
  end
  functions('Module', 'm:', methods)
  add('Module', 'm.training', 'training')
  add('Module', 'm.weight, m.bias, ...', 'weight')
  -- optimizers and schedulers
  functions('optim', 'optim.', optim)
  local lin = nn.Linear(1, 1)
  local opt = optim.SGD(lin, {lr = 1})
  functions('Optimizer', 'opt:', getmetatable(opt).__methods)
  functions('Scheduler', 'sched:', getmetatable(optim.StepLR(opt, {step_size = 1})).__methods)
  return rows
end

local function read_reference()
  local names, header = {}, {}
  for line in io.lines(reference_path) do
    if line:match('^#') then
      header[#header + 1] = line:sub(3)
    elseif not line:match('^name\t') then
      local name, files, first = line:match('^([^\t]+)\t(%d+)\t(.*)$')
      names[#names + 1] = {name = name, files = tonumber(files), first = first}
    end
  end
  return names, header
end

local function escape(text) return (text:gsub('|', '\\|')) end

local function page()
  local rows = engine_names()
  local offered = {}  -- PyTorch name -> the engine names standing for it
  for _, r in ipairs(rows) do
    if r.pytorch ~= '' then
      offered[r.pytorch] = offered[r.pytorch] or {}
      table.insert(offered[r.pytorch], r.shown)
    end
  end
  local reasons = {}
  for _, entry in ipairs(engine.surface.not_offered()) do reasons[entry.name] = entry.reason end
  local reference, header = read_reference()
  local available, left_out, missing = 0, 0, {}
  local lines = {}
  for _, ref in ipairs(reference) do
    local status
    if offered[ref.name] then
      available = available + 1
      status = '`' .. table.concat(offered[ref.name], '`, `') .. '`'
    elseif reasons[ref.name] then
      left_out = left_out + 1
      status = 'left out: ' .. reasons[ref.name]
    else
      missing[#missing + 1] = ref.name
      status = '**not yet**'
    end
    lines[#lines + 1] = ('| `%s` | %d | %s |'):format(ref.name, ref.files, escape(status))
  end
  local share = available / #reference
  local out = {}
  local function w(s) out[#out + 1] = s end
  w('# Coverage of PyTorch\'s names')
  w('')
  w('Written by `tests/surface/coverage.lua` from the binding tables the Lua libraries are built')
  w('from; do not edit (`engine run tests/surface/coverage.lua --write` rewrites it, and the test')
  w('`lua.coverage` fails when it is not current). Where a row says nothing, the engine\'s name')
  w('behaves as PyTorch\'s under the Lua conventions (docs/lua-api/README.md): 1-based')
  w('dimensions and positions, options in a trailing table, several results as several values.')
  w('')
  w('## The names PyTorch programs call')
  w('')
  w('The reference is every name of torch, torch.nn, torch.nn.functional, torch.nn.init,')
  w('torch.nn.utils, torch.optim, and the methods of tensors, modules and optimizers that these')
  w('programs call (`tests/surface/gather_reference.py`, reading them with Python\'s ast):')
  w('')
  for _, h in ipairs(header) do
    if h:match('^pytorch/examples') or h:match('^torchvision') or h:match('^torch ') then
      w('- ' .. h)
    end
  end
  w('')
  w(('**%d of %d available (%.1f%%)**; %d left out on purpose, each with what stands for it; %d')
    :format(available, #reference, 100 * share, left_out, #missing) ..
    ' not yet. Other namespaces (torch.distributed, torch.utils.data, torch.cuda, torchvision\'s')
  w('datasets and transforms) are outside the reference: the engine\'s data library,')
  w('`engine train --nproc` and `--device` stand for them.')
  w('')
  w('| PyTorch | programs calling it | engine |')
  w('|---|---|---|')
  for _, l in ipairs(lines) do w(l) end
  w('')
  w('## Every name the engine offers')
  w('')
  w('By library, with the PyTorch name each stands for (none: the engine\'s own) and what differs.')
  local by_library, order = {}, {}
  for _, r in ipairs(rows) do
    if not by_library[r.library] then
      by_library[r.library] = {}
      order[#order + 1] = r.library
    end
    table.insert(by_library[r.library], r)
  end
  for _, library in ipairs(order) do
    w('')
    w('### ' .. library)
    w('')
    w('| engine | PyTorch | differs |')
    w('|---|---|---|')
    for _, r in ipairs(by_library[library]) do
      w(('| `%s` | %s | %s |'):format(r.shown, r.pytorch ~= '' and ('`' .. r.pytorch .. '`') or '',
        escape(r.note)))
    end
  end
  return table.concat(out, '\n') .. '\n', share, missing
end

local text, share, missing = page()
if arg[1] == '--write' then
  local f = assert(io.open(page_path, 'w'))
  f:write(text)
  f:close()
  print(('wrote %s: %.1f%% of the reference available'):format(page_path, 100 * share))
  return
end
local f = io.open(page_path, 'r')
local current = f and f:read('*a') or ''
if f then f:close() end
if current ~= text then
  error('docs/lua-api/coverage.md is not current: engine run tests/surface/coverage.lua --write', 0)
end
if share < kTarget then
  error(('%.1f%% of the reference available, below %d%%; not yet: %s'):format(100 * share,
    100 * kTarget, table.concat(missing, ' ')), 0)
end
print(('coverage: %.1f%% of the reference available, the page is current'):format(100 * share))
