-- require 'nn': the built-in layers of nn.core, plus what reads better in Lua: modules written
-- in Lua (nn.Module:extend), nn.Parameter, iterators over parameters, and the model zoo.
local core = require 'nn.core'
local torch = require 'torch'

local nn = {}
local internal = {new_lua_module = true, register = true, register_parameter = true,
                  register_buffer = true, is_module = true, module_methods = true}
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

-- nn.Parameter(t): a tensor that registers as a parameter when assigned to a module field.
local parameters = setmetatable({}, {__mode = 'k'})
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

function Module:register_buffer(name, tensor)
  rawget(self, '__fields')[name] = core.register_buffer(self, name, tensor)
end

local function instance_index(class)
  return function(object, key)
    local value = rawget(object, '__fields')[key]
    if value ~= nil then return value end
    if key == 'training' then return object:is_training() end
    return class[key]
  end
end

local function instance_newindex(object, key, value)
  local fields = rawget(object, '__fields')
  if type(key) == 'string' then
    if parameters[value] then
      fields[key] = core.register_parameter(object, key, value)
      return
    end
    if core.is_module(value) then core.register(object, key, value) end
  end
  fields[key] = value
end

-- Module:extend(name) -> a class; Class(...) builds an instance and calls Class.init.
function Module:extend(name)
  if type(name) ~= 'string' then error('Module:extend expects a class name', 2) end
  local class = {__classname = name, super = self}
  class.__index = instance_index(class)
  class.__newindex = instance_newindex
  class.__call = function(object, ...) return object:forward(...) end
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
