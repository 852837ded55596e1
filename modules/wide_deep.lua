-- Wide & deep (Cheng et al. 2016) for tabular data: the wide part is a linear model over
-- crossed categorical features (hashed into buckets, one weight per bucket and class, as an
-- EmbeddingBag sum); the deep part embeds each categorical column, appends the numeric columns
-- and runs an MLP. The output is the sum of both parts' logits.
--   nn.model('wide_deep', {categorical = {100, 12, 7}, numeric = 5, crossed = 1000,
--                          embedding_dim = 8, hidden = {64, 32}, num_classes = 2})
-- forward(categorical, numeric, crossed) or forward{categorical = ..., numeric = ...,
-- crossed = ...}: categorical N x C ids (int64, 1-based, column j in 1..categorical[j]),
-- numeric N x F floats, crossed N x K bucket ids (int64, 1-based, in 1..crossed).
local torch, nn = require 'torch', require 'nn'

local WideDeep = nn.Module:extend('WideDeep')

function WideDeep:init(options)
  options = options or {}
  self.cardinalities = options.categorical or {100, 100, 50, 50, 20, 20, 10, 10}
  self.numeric = options.numeric or 5
  local classes, dim = options.num_classes or 2, options.embedding_dim or 8
  self.wide = nn.EmbeddingBag(options.crossed or 1000, classes, {mode = 'sum'})
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

function WideDeep:forward(categorical, numeric, crossed)
  if not torch.is_tensor(categorical) and type(categorical) == 'table' then
    categorical, numeric, crossed = categorical.categorical, categorical.numeric, categorical.crossed
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
