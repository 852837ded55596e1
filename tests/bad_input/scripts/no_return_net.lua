-- A Lua module for module_without_return.lua: it forgets `return NoReturn` at its end.
local nn = require 'nn'
local NoReturn = nn.Module:extend('NoReturn')
function NoReturn:init() self.fc = nn.Linear(784, 10) end
function NoReturn:forward(x) return self.fc(x:view(x:size(1), -1)) end
