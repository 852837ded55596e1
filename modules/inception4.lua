-- Inception v4 (Szegedy et al. 2016) as DLBS builds it (after tf_cnn_benchmarks): blocks are
-- parallel branches of operators, concatenated along channels; each convolution is followed
-- by batch norm (eps 2e-5) and ReLU. Input N x 3 x 299 x 299; output logits N x classes.
local torch, nn = require 'torch', require 'nn'

local inception4 = {}

-- Operators: {'conv', filters, kernel, stride, padding}, {'max' | 'avg', kernel, stride,
-- padding}, or a list of branches (a nested Parallel). Returns the module and its channels.
local Parallel
local function operator(op, channels)
  if type(op[1]) == 'table' then
    local p = Parallel(channels, op)
    return p, p.channels
  end
  local kind = op[1]
  if kind == 'conv' then
    return nn.Sequential {
      nn.Conv2d(channels, op[2], op[3], {stride = op[4], padding = op[5]}),
      nn.BatchNorm2d(op[2], {eps = 2e-5, momentum = 0.9}),
      nn.ReLU(),
    }, op[2]
  elseif kind == 'max' then
    return nn.MaxPool2d(op[2], {stride = op[3], padding = op[4]}), channels
  elseif kind == 'avg' then
    return nn.AvgPool2d(op[2], {stride = op[3], padding = op[4]}), channels
  end
  error('inception4: unknown operator ' .. tostring(kind))
end

Parallel = nn.Module:extend('Parallel')
inception4.Parallel = Parallel

function Parallel:init(channels, branches)
  local modules, total = {}, 0
  for i, branch in ipairs(branches) do
    local ops, c = {}, channels
    for j, op in ipairs(branch) do ops[j], c = operator(op, c) end
    modules[i] = nn.Sequential(ops)
    total = total + c
  end
  self.branches = nn.ModuleList(modules)
  self.channels = total
end

function Parallel:forward(x)
  local outputs = {}
  for i, branch in ipairs(self.branches) do outputs[i] = branch(x) end
  return torch.cat(outputs, 2)
end

local function conv(n, k, s, p) return {'conv', n, k, s or 1, p or 0} end
local split3 = {{conv(256, {1, 3}, 1, {0, 1})}, {conv(256, {3, 1}, 1, {1, 0})}}

local blocks = {
  stem_a = {{conv(96, 3, 2)}, {{'max', 3, 2, 0}}},
  stem_b = {{conv(64, 1), conv(96, 3)},
            {conv(64, 1), conv(64, {1, 7}, 1, {0, 3}), conv(64, {7, 1}, 1, {3, 0}), conv(96, 3)}},
  stem_c = {{conv(192, 3, 2)}, {{'max', 3, 2, 0}}},
  a = {{conv(96, 1)}, {conv(64, 1), conv(96, 3, 1, 1)},
       {conv(64, 1), conv(96, 3, 1, 1), conv(96, 3, 1, 1)}, {{'avg', 3, 1, 1}, conv(96, 1)}},
  reduction_a = {{conv(384, 3, 2)}, {conv(192, 1), conv(224, 3, 1, 1), conv(256, 3, 2)},
                 {{'max', 3, 2, 0}}},
  b = {{conv(384, 1)},
       {conv(192, 1), conv(224, {1, 7}, 1, {0, 3}), conv(256, {7, 1}, 1, {3, 0})},
       {conv(192, 1), conv(192, {7, 1}, 1, {3, 0}), conv(224, {1, 7}, 1, {0, 3}),
        conv(224, {7, 1}, 1, {3, 0}), conv(256, {1, 7}, 1, {0, 3})},
       {{'avg', 3, 1, 1}, conv(128, 1)}},
  reduction_b = {{conv(192, 1), conv(192, 3, 2)},
                 {conv(256, 1), conv(256, {1, 7}, 1, {0, 3}), conv(320, {7, 1}, 1, {3, 0}),
                  conv(320, 3, 2)},
                 {{'max', 3, 2, 0}}},
  c = {{conv(256, 1)}, {conv(384, 1), split3},
       {conv(384, 1), conv(448, {3, 1}, 1, {1, 0}), conv(512, {1, 3}, 1, {0, 1}), split3},
       {{'avg', 3, 1, 1}, conv(256, 1)}},
}

local Inception4 = nn.Module:extend('Inception4')
inception4.Inception4 = Inception4

function Inception4:init(options)
  options = options or {}
  local layers, channels = {}, 3
  local function add(op)
    local m
    m, channels = operator(op, channels)
    layers[#layers + 1] = m
  end
  add(conv(32, 3, 2))
  add(conv(32, 3))
  add(conv(64, 3, 1, 1))
  for _, name in ipairs({'stem_a', 'stem_b', 'stem_c', 'a', 'a', 'a', 'a', 'reduction_a', 'b',
                         'b', 'b', 'b', 'b', 'b', 'b', 'reduction_b', 'c', 'c', 'c'}) do
    add(blocks[name])
  end
  layers[#layers + 1] = nn.AvgPool2d(8, {stride = 1})
  self.features = nn.Sequential(layers)
  self.classifier = nn.Sequential {nn.Dropout(0.2), nn.Linear(channels, options.num_classes or 1000)}
end

function Inception4:forward(x)
  return self.classifier(self.features(x):flatten(2))
end

inception4.inception4 = function(options) return Inception4(options) end

return inception4
