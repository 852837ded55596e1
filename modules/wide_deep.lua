-- Wide & deep (Cheng et al. 2016) for tabular data: the wide part is a linear model over
-- crossed categorical features (hashed into buckets, one weight per bucket and class, as an
-- EmbeddingBag sum); the deep part embeds each categorical column, appends the numeric columns
-- and runs an MLP. The output is the sum of both parts' logits.
--   nn.model('wide_deep', {categorical = {100, 12, 7}, numeric = 5, crossed = 1000,
--                          embedding_dim = 8, hidden = {64, 32}, num_classes = 2})
-- forward(categorical, numeric, crossed) or forward{categorical = ..., numeric = ...,
-- crossed = ...}: categorical N x C ids (int64, 1-based, column j in 1..categorical[j]),
-- numeric N x F floats, crossed N x K bucket ids (int64, 1-based, in 1..crossed).
-- With `crosses = {{3, 4}, {1, 2}}` (categorical columns crossed, by position) the model makes
-- the crossed ids itself, one bucket per combination of values, and `crossed` is not given:
-- then forward also takes a data.csv batch as it is, forward{input = numeric, categorical = ids},
-- so that engine train, eval, predict and bench need no hook.
local torch, nn = require 'torch', require 'nn'

local WideDeep = nn.Module:extend('WideDeep')

function WideDeep:init(options)
  options = options or {}
  self.cardinalities = options.categorical or {100, 100, 50, 50, 20, 20, 10, 10}
  self.numeric = options.numeric or 5
  local classes, dim = options.num_classes or 2, options.embedding_dim or 8
  self.crosses = options.crosses
  local buckets = options.crossed or 1000
  if self.crosses then
    buckets = 0
    for k, columns in ipairs(self.crosses) do
      local size = 1
      for _, j in ipairs(columns) do
        local n = self.cardinalities[j]
        if not n then
          error(('wide_deep: crosses[%d] names categorical column %s; there are %d'):format(k,
            tostring(j), #self.cardinalities), 3)
        end
        size = size * n
      end
      buckets = buckets + size
    end
  end
  self.buckets = buckets
  self.wide = nn.EmbeddingBag(buckets, classes, {mode = 'sum'})
  self.wide_bias = nn.Parameter(torch.zeros(classes))
  local embeddings = {}
  for j, n in ipairs(self.cardinalities) do embeddings[j] = nn.Embedding(n, dim) end
  self.embeddings = nn.ModuleList(embeddings)
  local layers, previous = {}, #self.cardinalities * dim + self.numeric
  for _, width in ipairs(options.hidden or {64, 32}) do
    layers[#layers + 1] = nn.Linear(previous, width)
    layers[#layers + 1] = nn.ReLU()
    previous = width
  end
  layers[#layers + 1] = nn.Linear(previous, classes)
  self.deep = nn.Sequential(layers)
end

-- The crossed bucket ids of `crosses`: for each cross, the mixed-radix number its columns'
-- values make, after the buckets of the crosses before it.
function WideDeep:cross(categorical)
  local ids, offset = {}, 0
  for k, columns in ipairs(self.crosses) do
    local id, size = nil, 1
    for _, j in ipairs(columns) do
      local value = categorical:select(2, j) - 1
      id = id and id * self.cardinalities[j] + value or value
      size = size * self.cardinalities[j]
    end
    ids[k] = id + (offset + 1)
    offset = offset + size
  end
  return torch.stack(ids, 2)
end

-- A batch of n random inputs, for engine bench.
function WideDeep:example_input(n)
  local columns = {}
  for j, cardinality in ipairs(self.cardinalities) do
    columns[j] = torch.randint(1, cardinality + 1, {n})
  end
  local inputs = {categorical = torch.stack(columns, 2), input = torch.randn(n, self.numeric)}
  if not self.crosses then inputs.crossed = torch.randint(1, self.buckets + 1, {n, 4}) end
  return inputs
end

function WideDeep:forward(categorical, numeric, crossed)
  if not torch.is_tensor(categorical) and type(categorical) == 'table' then
    local t = categorical
    categorical, numeric, crossed = t.categorical, t.numeric or t.input, t.crossed
  end
  if not torch.is_tensor(categorical) then
    error('wide_deep: forward needs categorical ids (N x ' .. #self.cardinalities .. '), got ' ..
      type(categorical), 2)
  end
  if crossed == nil and self.crosses then crossed = self:cross(categorical) end
  if not torch.is_tensor(crossed) then
    error('wide_deep: forward needs crossed bucket ids, or the option crosses to make them', 2)
  end
  if categorical:dim() ~= 2 or categorical:size(2) ~= #self.cardinalities then
    error(('wide_deep: categorical must be N x %d ids, got %s'):format(#self.cardinalities,
      table.concat(categorical:size(), 'x')), 2)
  end
  local n = categorical:size(1)
  local columns = {}
  for j, embedding in ipairs(self.embeddings) do columns[j] = embedding(categorical:select(2, j)) end
  columns[#columns + 1] = numeric
  local deep = self.deep(torch.cat(columns, 2))
  -- one bag per row: offsets 1, 1 + K, 1 + 2K, ...
  local k = crossed:size(2)
  local offsets = torch.arange(0, n):mul(k):add(1)
  local wide = self.wide(crossed:reshape(-1), offsets) + self.wide_bias
  return wide + deep
end

return {wide_deep = function(options) return WideDeep(options) end, WideDeep = WideDeep}
