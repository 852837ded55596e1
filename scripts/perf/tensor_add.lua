-- Cost of one tensor op called from Lua: N calls of a + b on 16-element float32 tensors.
-- Prints one JSON line. Compare with tensor_add.cpp (the same loop in C++) and
-- tensor_add.py (in Python's PyTorch); see docs/performance.md.
--   build/bin/engine run --threads 1 scripts/perf/tensor_add.lua [N]
local torch = require 'torch'
local n = tonumber(arg[1]) or 1000000
local a, b = torch.ones(16), torch.ones(16)
for _ = 1, 10000 do local _ = a + b end  -- warm-up: JIT traces, allocator
collectgarbage()
local t0 = os.clock()
for _ = 1, n do local _ = a + b end
local seconds = os.clock() - t0
print(('{"impl": "engine-lua", "calls": %d, "ns_per_call": %.1f}'):format(n, seconds * 1e9 / n))
