-- require 'nn': the built-in layers of nn.core, plus what reads better in Lua: modules written
-- in Lua (nn.Module:extend), nn.Parameter, iterators over parameters, and the model zoo.
local core = require 'nn.core'
local torch = require 'torch'

local nn = {}
local internal = {new_lua_module = true, forward_call = true, register = true, register_parameter = true,
                  register_buffer = true, is_module = true, module_methods = true,
                  parameter_marks = true, own_tensors = true, layer_names = true,
                  square_subsequent_mask = true}
for name, value in pairs(core) do
  if not internal[name] then nn[name] = value end
end

-- Methods shared by built-in modules (userdata) and Lua-defined ones (tables).
local methods = core.module_methods

local function pairs_iterator(names, values)
  local i = 0
  return function()
    i = i + 1
    if names[i] ~= nil then return names[i], values[i] end
  end
end

function methods.named_parameters(self) return pairs_iterator(self:named_parameter_lists()) end
function methods.named_buffers(self) return pairs_iterator(self:named_buffer_lists()) end
function methods.buffers(self)
  local _, values = self:named_buffer_lists()
  return values
end
function methods.named_children(self) return pairs_iterator(self:named_children_lists()) end
function methods.children(self)
  local _, values = self:named_children_lists()
  return values
end

-- The module and all its descendants, depth first, named by their dotted paths ('' for self),
-- as PyTorch's named_modules.
local function collect_modules(module, prefix, names, values)
  names[#names + 1], values[#values + 1] = prefix, module
  local child_names, children = module:named_children_lists()
  for i = 1, #child_names do
    local name = prefix == '' and child_names[i] or prefix .. '.' .. child_names[i]
    collect_modules(children[i], name, names, values)
  end
end
function methods.named_modules(self)
  local names, values = {}, {}
  collect_modules(self, '', names, values)
  return pairs_iterator(names, values)
end
function methods.modules(self)
  local names, values = {}, {}
  collect_modules(self, '', names, values)
  return values
end

-- PyTorch's shorthands for :to, and requires_grad_ on every parameter; each returns self.
function methods.cpu(self) return self:to('cpu') end
function methods.cuda(self, index) return self:to(index and ('cuda:' .. index) or 'cuda') end
function methods.float(self) return self:to('float32') end
function methods.double(self) return self:to('float64') end
function methods.half(self) return self:to('float16') end
function methods.bfloat16(self) return self:to('bfloat16') end
function methods.requires_grad_(self, on)
  for _, p in ipairs(self:parameters()) do p:requires_grad_(on ~= false) end
  return self
end

-- module:apply(fn): fn on every descendant, children before parents (as PyTorch); returns self.
function methods.apply(self, fn)
  if type(fn) ~= 'function' then error('apply expects a function, got ' .. type(fn), 2) end
  for _, child in ipairs(self:children()) do child:apply(fn) end
  fn(self)
  return self
end

-- nn.Parameter(t): a tensor that registers as a parameter when assigned to a module field.
-- (the marks are shared with the C++ side, which marks the parameters it hands out: a layer's
-- weight assigned to a Lua module's field registers there, as a Parameter does in PyTorch)
local parameters = core.parameter_marks
function nn.Parameter(t, requires_grad)
  if not torch.is_tensor(t) then
    error('nn.Parameter expects a tensor, got ' .. type(t), 2)
  end
  local p = t:detach():requires_grad(requires_grad ~= false)
  parameters[p] = true
  return p
end

-- The base class of modules written in Lua.
local Module = {__classname = 'Module'}
nn.Module = Module

for name, fn in pairs(methods) do Module[name] = fn end

function Module:init() end

function Module:forward()
  error(self.__classname .. ' has no forward method', 2)
end

-- m:add_module(name, child) and its newer name register_module: m[name] = child
function Module:add_module(name, module)
  if type(name) ~= 'string' then error('add_module expects a name, got ' .. type(name), 2) end
  if module ~= nil and not core.is_module(module) then
    error(("add_module: '%s' must be a module, got %s"):format(name, type(module)), 2)
  end
  self[name] = module
end
Module.register_module = Module.add_module

function Module:register_buffer(name, tensor)
  rawget(self, '__fields')[name] = core.register_buffer(self, name, tensor):keep()
end

local function index_builtin(layer, key) return layer[key] end

local function instance_index(class)
  return function(object, key)
    local fields = rawget(object, '__fields')
    local value = fields[key]
    if value ~= nil then return value end
    if key == 'training' then return object:is_training() end
    value = class[key]
    if value == nil and fields.__builtin then  -- the built-in base's fields: lin.in_features
      -- a name the base lacks reads as nil, as on any Lua module (and C++ that probes a
      -- module's field, bench's example_input, must never meet a Lua error there)
      local ok, inner = pcall(index_builtin, fields.__builtin, key)
      if ok then return inner end
      return nil
    end
    return value
  end
end

-- A tensor stored in a module's field outlives any torch.scope it was made in (x:keep()).
local function instance_newindex(object, key, value)
  local fields = rawget(object, '__fields')
  if type(key) == 'string' then
    if parameters[value] then
      fields[key] = core.register_parameter(object, key, value):keep()
      return
    end
    if core.is_module(value) then core.register(object, key, value) end
  end
  if torch.is_tensor(value) then value:keep() end
  fields[key] = value
end

-- Module:extend(name) -> a class; Class(...) builds an instance and calls Class.init.
function Module:extend(name)
  if type(name) ~= 'string' then error('Module:extend expects a class name', 2) end
  local class = {__classname = name, super = self}
  class.__index = instance_index(class)
  class.__newindex = instance_newindex
  class.__call = core.forward_call  -- object:forward(...), the module counted as in forward
  class.__tostring = function(object) return tostring(rawget(object, '__cpp')) end
  return setmetatable(class, {
    __index = self,
    __call = function(cls, ...) return cls:new(...) end,
  })
end

function Module:new(...)
  local object = {__fields = {}}
  object.__cpp = core.new_lua_module(self.__classname, object)
  setmetatable(object, self)
  self.init(object, ...)
  return object
end

-- Built-in layers as classes: nn.Linear(3, 2) builds the layer as before, and
-- nn.Linear:extend('MyLinear') is a Lua module whose init (nn.Linear.init(self, 3, 2)) builds one
-- and registers its own parameters, buffers and children on self under their names (the same
-- tensors: one weight, stepped once), and whose forward (nn.Linear.forward(self, x)) runs it;
-- PyTorch's `class MyLinear(nn.Linear)`.
local function builtin_class(name, constructor)
  local class = {__classname = name}
  function class.init(self, ...)
    local inner = constructor(...)
    local parameters, buffers, hidden_children = core.own_tensors(inner)
    if hidden_children then
      error(('nn.%s cannot be the base of a Lua module yet: it holds layers the engine does not ' ..
             'hand to scripts (write the module with an nn.%s field instead)'):format(name, name), 3)
    end
    local fields = rawget(self, '__fields')
    fields.__builtin = inner
    for _, p in ipairs(parameters) do self[p] = inner[p] end  -- marked: registered as parameters
    for _, b in ipairs(buffers) do self:register_buffer(b, inner[b]) end
    local children = {}
    for child_name, child in inner:named_children() do
      self[child_name] = child
      children[child_name] = child
    end
    fields.__builtin_children = children
  end
  function class.forward(self, ...)
    local fields = rawget(self, '__fields')
    local inner = rawget(fields, '__builtin')
    if not inner then
      error(('nn.%s.forward needs an object built by nn.%s.init'):format(name, name), 2)
    end
    -- the layer's own forward runs its own children: one the module replaced (PyTorch's
    -- TransformerModel sets self.decoder = nn.Linear) would be left out without a word
    for child_name, child in pairs(fields.__builtin_children) do
      if rawget(fields, child_name) ~= child then
        error(('nn.%s.forward runs the layer\'s own %s, which this module replaced: write the ' ..
               'forward from the module\'s fields (self.%s(...))'):format(name, child_name,
                                                                          child_name), 2)
      end
    end
    if inner.training ~= self.training then inner:train(self.training) end
    return inner(...)
  end
  return setmetatable(class, {
    __index = Module,
    __call = function(_, ...) return constructor(...) end,
  })
end

for _, name in ipairs(core.layer_names) do nn[name] = builtin_class(name, core[name]) end
nn.Transformer.generate_square_subsequent_mask = core.square_subsequent_mask

-- nn.ModuleList{m1, m2, ...}: children named '0', '1', ... as in PyTorch, reached 1-based
-- (list[1] is the child named '0'); #list, ipairs(list), list:append(m). No forward.
local ModuleList = Module:extend('ModuleList')
nn.ModuleList = ModuleList

function ModuleList:init(modules)
  rawget(self, '__fields')._length = 0
  for _, m in ipairs(modules or {}) do self:append(m) end
end

function ModuleList:append(module)
  if not core.is_module(module) then
    error('ModuleList:append expects a module, got ' .. type(module), 2)
  end
  local fields = rawget(self, '__fields')
  local n = fields._length
  self[tostring(n)] = module  -- registers the child under PyTorch's name
  rawset(self, n + 1, module)  -- the array part: #list and ipairs(list) need no metamethod
  fields._length = n + 1
  return self
end

-- list:set(i, m) replaces the child at position i. (Plain `list[i] = m` cannot be intercepted
-- for an existing position in Lua 5.1, so it is not the way to replace a child.)
function ModuleList:set(i, module)
  local n = rawget(self, '__fields')._length
  if type(i) ~= 'number' or i % 1 ~= 0 or i < 1 or i > n then
    error(('ModuleList:set: index %s is out of range 1..%d'):format(tostring(i), n), 2)
  end
  if not core.is_module(module) then error('ModuleList:set expects a module', 2) end
  self[tostring(i - 1)] = module
  rawset(self, i, module)
  return self
end

local module_list_index = ModuleList.__index
ModuleList.__index = function(object, key)
  if type(key) == 'number' then
    error(('ModuleList index %s is out of range 1..%d'):format(tostring(key),
      rawget(object, '__fields')._length), 2)
  end
  return module_list_index(object, key)
end
ModuleList.__newindex = function(object, key, value)
  -- Existing positions are raw fields and never get here: any number here is out of range.
  if type(key) == 'number' then
    error(('ModuleList index %s is out of range 1..%d (use append)'):format(tostring(key),
      rawget(object, '__fields')._length), 2)
  end
  instance_newindex(object, key, value)
end

function ModuleList:forward()
  error('ModuleList has no forward: call its modules', 2)
end

-- nn.ModuleDict{name = module, ...} (names sorted) or nn.ModuleDict{{'name', module}, ...}
-- (in the given order): children under their names; dict.name, dict:keys(), dict:items().
local ModuleDict = Module:extend('ModuleDict')
nn.ModuleDict = ModuleDict

function ModuleDict:init(modules)
  rawget(self, '__fields')._keys = {}
  modules = modules or {}
  if #modules > 0 then
    for i, pair in ipairs(modules) do
      if type(pair) ~= 'table' or type(pair[1]) ~= 'string' then
        error(('ModuleDict: element %d must be {name, module}'):format(i), 3)
      end
      self:set(pair[1], pair[2])
    end
  else
    local names = {}
    for name in pairs(modules) do names[#names + 1] = name end
    table.sort(names)
    for _, name in ipairs(names) do self:set(name, modules[name]) end
  end
end

function ModuleDict:set(name, module)
  if type(name) ~= 'string' then error('ModuleDict keys must be strings', 2) end
  if not core.is_module(module) then
    error(("ModuleDict: '%s' must be a module, got %s"):format(name, type(module)), 2)
  end
  local keys = rawget(self, '__fields')._keys
  if rawget(self, '__fields')[name] == nil then keys[#keys + 1] = name end
  self[name] = module
  return self
end

function ModuleDict:keys()
  local out = {}
  for i, k in ipairs(rawget(self, '__fields')._keys) do out[i] = k end
  return out
end

function ModuleDict:items()
  local fields, i = rawget(self, '__fields'), 0
  return function()
    i = i + 1
    local k = fields._keys[i]
    if k ~= nil then return k, fields[k] end
  end
end

function ModuleDict:forward()
  error('ModuleDict has no forward: call its modules', 2)
end

-- The zoo: nn.model(id, options) builds a model by the id `engine bench --model` takes.
function nn.model(id, options)
  local zoo = require 'zoo'
  local entry = zoo[id]
  if not entry then
    local ids = {}
    for k in pairs(zoo) do ids[#ids + 1] = k end
    table.sort(ids)
    error(("unknown model '%s' (known: %s)"):format(tostring(id), table.concat(ids, ', ')), 2)
  end
  local family = require(entry.module)
  local build = type(family) == 'table' and rawget(family, entry.build or id) or family
  return build(options or {})
end

return nn
