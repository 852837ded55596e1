-- A tabular classifier on a CSV: wide & deep (modules/wide_deep.lua) on a loan-approval table
-- with numeric and categorical columns. The first run writes the table (synthetic, seeded) to
-- hp.root; then
--   engine train scripts/loans_wide_deep.lua
--   engine predict scripts/loans_wide_deep.lua --checkpoint runs/loans/<run>.h5 \
--       --input runs/data/loans/new_loans.csv --output predictions.csv
-- data.csv standardises the numeric columns and maps the categorical ones through the training
-- split's vocabulary; the statistics travel in every checkpoint, so engine predict reads new
-- rows exactly as training did. A batch holds two inputs, the numeric columns (`input`) and the
-- categorical ids (`categorical`): the trainer hands both to the model's forward as one table,
-- and the model crosses housing x purpose and region x job itself (`crosses`), so no
-- train_batch hook is needed for train, eval, predict or bench.
local nn, optim, data = require 'nn', require 'optim', require 'data'

local REGIONS = {'north', 'south', 'east', 'west', 'centre', 'islands'}
local JOBS = {'clerk', 'engineer', 'farmer', 'nurse', 'retail', 'student', 'teacher', 'trades'}
local HOUSING = {'mortgage', 'own', 'rent'}
local PURPOSES = {'car', 'education', 'home', 'medical', 'business'}
-- categorical columns in data.csv's order (as listed below), each with one out-of-vocabulary id
local CARDINALITIES = {#REGIONS + 1, #JOBS + 1, #HOUSING + 1, #PURPOSES + 1}

-- Writes train.csv, validation.csv and new_loans.csv (no target) under root, once.
local function write_tables(root)
  local probe = io.open(root .. '/train.csv')
  if probe then probe:close(); return end
  assert(os.execute('mkdir -p "' .. root .. '"'), 'cannot create ' .. root)
  math.randomseed(7)
  local function pick(list) return list[math.random(#list)] end
  local function row()
    local age, income = math.random(21, 70), math.floor(20000 + math.random() * 100000)
    local debt, years = math.floor(math.random() * 40000), math.random(0, 30)
    local credit = math.random(450, 850)
    local region, job, housing, purpose = pick(REGIONS), pick(JOBS), pick(HOUSING), pick(PURPOSES)
    local z = 0.02 * (credit - 650) + 3e-5 * (income - 60000) - 8e-5 * debt + 0.03 * years
    if job == 'student' then z = z - 1 end
    if housing == 'rent' and purpose == 'home' then z = z - 1.5 end  -- what the wide part learns
    if housing == 'own' and purpose == 'business' then z = z + 1 end
    if region == 'islands' then z = z - 0.5 end
    local approved = math.random() < 1 / (1 + math.exp(-z)) and 'yes' or 'no'
    return {age, income, debt, years, credit, region, job, housing, purpose, approved}
  end
  local header = 'age,income,debt,years_employed,credit_score,region,job,housing,purpose,approved'
  -- in a fixed order: pairs() over a table of names may visit them in any order, and each
  -- file takes its rows from the one seeded generator
  for _, table_size in ipairs({{'train', 4000}, {'validation', 1000}, {'new_loans', 20}}) do
    local name, n = table_size[1], table_size[2]
    local f = assert(io.open(root .. '/' .. name .. '.csv', 'w'))
    f:write(name == 'new_loans' and header:gsub(',approved', '') or header, '\n')
    for _ = 1, n do
      local r = row()
      if name == 'new_loans' then r[#r] = nil end
      f:write(table.concat(r, ','), '\n')
    end
    f:close()
  end
end

return {
  name = 'loans',
  seed = 1,
  hparams = { root = 'runs/data/loans', lr = 3e-3, batch_size = 128, epochs = 8 },

  model = function(hp)
    -- crossed: housing x purpose, region x job (positions in the categorical columns below)
    return nn.model('wide_deep', {categorical = CARDINALITIES, numeric = 5,
                                  crosses = {{3, 4}, {1, 2}}, embedding_dim = 6,
                                  hidden = {32, 16}, num_classes = 2})
  end,

  data = function(hp)
    write_tables(hp.root)
    local columns = {target = 'approved',
                     numeric = {'age', 'income', 'debt', 'years_employed', 'credit_score'},
                     categorical = {'region', 'job', 'housing', 'purpose'}}
    local function csv(file, stats)
      local options = {path = hp.root .. '/' .. file, stats = stats}
      for k, v in pairs(columns) do options[k] = v end
      return data.csv(options)
    end
    local train = csv('train.csv')
    return {
      train = train:shuffle():batch(hp.batch_size),
      validation = csv('validation.csv', train):batch(500),
    }
  end,

  loss = nn.CrossEntropyLoss(),
  optimizer = function(params, hp) return optim.AdamW(params, {lr = hp.lr}) end,
  metrics = {'accuracy', 'f1'},
  trainer = function(hp) return {epochs = hp.epochs, log_every = 10, keep_best = 'validation.f1'} end,
}
