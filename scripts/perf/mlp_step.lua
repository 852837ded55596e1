-- Cost of a model written in Lua against the same model built from built-in layers: the `mlp`
-- training step (SGD lr 0.01 momentum 0.9, NLL loss on log-softmax output, synthetic data in
-- memory), as ../shared/bench/cpp_loop times it. Alternates the two in rounds, discards the
-- warm-up, prints one JSON line per variant with the p50 step time.
--   build/bin/engine run --threads 2 scripts/perf/mlp_step.lua [BATCH] [STEPS]
local torch, nn, optim, engine = require 'torch', require 'nn', require 'optim', require 'engine'
local batch, steps = tonumber(arg[1]) or 64, tonumber(arg[2]) or 500
local round, warmup = 50, 50

-- The mlp of modules/mlp.lua with forward written in Lua.
local LuaMLP = dofile((arg[0]:match('(.*/)') or './') .. 'modules/lua_mlp.lua')

torch.manual_seed(0)
local x = torch.randn(batch, 1, 28, 28)
local y = torch.randint(1, 11, {batch})
local loss_fn = nn.NLLLoss()

local variants = {}
for _, v in ipairs({{'builtin', nn.model('mlp')}, {'lua_module', LuaMLP()}}) do
  variants[#variants + 1] = {name = v[1], model = v[2], times = {},
                             opt = optim.SGD(v[2]:parameters(), {lr = 0.01, momentum = 0.9})}
end

local function run(v, n, record)
  for _ = 1, n do
    local t0 = engine.clock()
    v.opt:zero_grad()
    loss_fn(v.model(x), y):backward()
    v.opt:step()
    if record then v.times[#v.times + 1] = (engine.clock() - t0) * 1000 end
  end
end

for _, v in ipairs(variants) do run(v, warmup, false) end
for _ = 1, math.ceil(steps / round) do
  for _, v in ipairs(variants) do run(v, round, true) end
end
for _, v in ipairs(variants) do
  table.sort(v.times)
  print(('{"impl": "engine-%s", "model": "mlp", "batch_size": %d, "threads": %d, "p50_ms": %.4f, "min_ms": %.4f}')
    :format(v.name, batch, engine.threads(), v.times[math.floor(#v.times / 2) + 1], v.times[1]))
end
