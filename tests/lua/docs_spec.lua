-- Every tensor method and torch.* function is documented in docs/lua-api/tensor.md: each name
-- must appear there as a word inside a `code` span.
local here = arg[0]:match('(.*/)')
package.path = here .. '?.lua;' .. package.path
local spec = require 'spec'
local torch = require 'torch'

local function documented_words(path)
  local file = assert(io.open(path, 'r'))
  local text = file:read('*a'):gsub('```.-```', '')  -- fenced blocks would upset the pairing
  file:close()
  local words = {}
  for span in text:gmatch('`([^`]+)`') do
    for word in span:gmatch('[%a_][%w_]*') do words[word] = true end
  end
  return words
end

local function undocumented(names, words)
  local missing = {}
  for _, name in ipairs(names) do
    if not words[name] then missing[#missing + 1] = name end
  end
  table.sort(missing)
  return missing
end

local function keys(t, filter)
  local out = {}
  for k, v in pairs(t) do
    if type(k) == 'string' and (not filter or filter(v)) then out[#out + 1] = k end
  end
  return out
end

spec.describe('docs/lua-api/tensor.md', function()
  local words = documented_words(here .. '../../docs/lua-api/tensor.md')
  spec.it('documents every tensor method', function()
    local missing = undocumented(keys(getmetatable(torch.ones(1)).__methods), words)
    if #missing > 0 then error('undocumented methods: ' .. table.concat(missing, ' '), 0) end
  end)
  spec.it('documents every torch, torch.linalg and torch.autograd function', function()
    local is_function = function(v) return type(v) == 'function' end
    local names = keys(torch, is_function)
    for _, sub in ipairs({'linalg', 'autograd'}) do
      for _, name in ipairs(keys(torch[sub], is_function)) do names[#names + 1] = name end
    end
    local missing = undocumented(names, words)
    if #missing > 0 then error('undocumented functions: ' .. table.concat(missing, ' '), 0) end
  end)
end)

spec.finish()
