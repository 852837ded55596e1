-- pytorch/examples' regression: fit a degree-4 polynomial with one nn.Linear on random batches
-- until the loss falls under 1e-3, then print the learned and the true function.
--   engine run scripts/regression.lua
local torch, nn, optim = require 'torch', require 'nn', require 'optim'

local degree = 4
torch.manual_seed(1)
local w_target = torch.randn(degree, 1) * 5
local b_target = torch.randn(1) * 5

-- x -> [x, x^2, x^3, x^4]
local function features(x)
  local columns = {}
  for i = 1, degree do columns[i] = x:unsqueeze(2) ^ i end
  return torch.cat(columns, 2)
end

local function f(x) return x:mm(w_target) + b_target:item() end

local function poly_desc(w, b)
  local s = 'y = '
  for i = 1, w:size(1) do s = s .. ('%+.2f x^%d '):format(w[i]:item(), i) end
  return s .. ('%+.2f'):format(b[1]:item())
end

local function get_batch(batch_size)
  local x = features(torch.randn(batch_size))
  return x, f(x)
end

local fc = nn.Linear(degree, 1)
local opt = optim.SGD(fc:parameters(), {lr = 0.1})
local loss_fn = nn.SmoothL1Loss()
local loss, batches = 0, 0
repeat
  batches = batches + 1
  local x, y = get_batch(32)
  opt:zero_grad()
  local l = loss_fn(fc(x), y)
  l:backward()
  opt:step()
  loss = l:item()
until loss < 1e-3 or batches > 100000

print(('Loss: %.6f after %d batches'):format(loss, batches))
local learned = fc:state_dict()
print('==> Learned function:\t' .. poly_desc(learned.weight:view(-1), learned.bias))
print('==> Actual function:\t' .. poly_desc(w_target:view(-1), b_target))
