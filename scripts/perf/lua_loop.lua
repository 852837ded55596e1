-- The training step (or forward pass) written as a one-model loop in Lua, as a user writes one
-- in `engine run` or a train_batch hook: zero_grad, forward, NLL loss, backward, SGD step (lr
-- 0.01, momentum 0.9), on a synthetic batch held in memory; every step timed after the
-- warm-up. Prints one JSON line like ../shared/bench's references.
--   engine run --threads 2 scripts/perf/lua_loop.lua MODEL BATCH STEPS WARMUP [MODE]
-- MODEL: a zoo id or a module file; MODE: plain (default; tensors left to the collector),
-- scope (each step in torch.scope), inference (forward in torch.inference_mode),
-- inference_scope (the same in torch.scope: the output released at once), no_grad.
local torch, nn, optim, engine = require 'torch', require 'nn', require 'optim', require 'engine'
local model_name = arg[1] or 'mlp'
local batch, steps, warmup = tonumber(arg[2]) or 64, tonumber(arg[3]) or 200, tonumber(arg[4]) or 20
local mode = arg[5] or 'plain'

local model
if model_name:match('%.lua$') then
  local class = dofile(model_name)
  model = class()
else
  model = nn.model(model_name)
end
torch.manual_seed(0)
local x = torch.randn(batch, 1, 28, 28)
local y = torch.randint(1, 11, {batch})
local loss_fn = nn.NLLLoss()
local opt = optim.SGD(model:parameters(), {lr = 0.01, momentum = 0.9})

local function train_step()
  opt:zero_grad()
  loss_fn(model(x), y):backward()
  opt:step()
end
local function forward() return model(x) end

local step
if mode == 'plain' then
  step = train_step
elseif mode == 'scope' then
  step = function() torch.scope(train_step) end
elseif mode == 'inference' then
  model:eval()
  step = function() torch.inference_mode(forward) end
elseif mode == 'inference_scope' then
  model:eval()
  -- the scope's function returns nothing: a tensor it returned would be kept, not released
  step = function() torch.scope(function() torch.inference_mode(forward) end) end
elseif mode == 'no_grad' then
  model:eval()
  step = function() torch.no_grad(forward) end
else
  error('lua_loop.lua: MODE must be plain, scope, inference, inference_scope or no_grad, got ' .. mode)
end

local times = {}
for i = 1, warmup + steps do
  local t0 = engine.clock()
  step()
  if i > warmup then times[#times + 1] = (engine.clock() - t0) * 1000 end
end
table.sort(times)
local sum = 0
for _, t in ipairs(times) do sum = sum + t end
local phase = (mode:match('inference') or mode == 'no_grad') and 'inference' or 'training'
print(('{"impl": "engine-lua-loop-%s", "model": "%s", "phase": "%s", "batch_size": %d, "threads": %d, '
       .. '"mean_ms": %.4f, "p50_ms": %.4f, "min_ms": %.4f}')
  :format(mode, model_name, phase, batch, engine.threads(), sum / #times,
          times[math.ceil(#times / 2)], times[1]))
