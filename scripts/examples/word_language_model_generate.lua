-- pytorch/examples' word_language_model/generate.py: words sampled one at a time from a model
-- trained by scripts/examples/word_language_model.lua, each fed back as the next input.
--   engine run scripts/examples/word_language_model_generate.lua CHECKPOINT [--words 1000]
--       [--temperature 1.0] [--seed 1111] [--outf generated.txt] [--data FOLDER]
--       [--log-interval 100]
-- The model is rebuilt from the hyperparameters the checkpoint records and loaded with its
-- weights; the corpus (its run's hp.data unless --data) gives the words' names.
local torch, engine = require 'torch', require 'engine'
local word_lm = require 'word_lm'
local corpus_reader = require 'word_lm_corpus'

local usage = 'usage: engine run word_language_model_generate.lua CHECKPOINT [--words N] ' ..
              '[--temperature T] [--seed S] [--outf FILE] [--data FOLDER] [--log-interval N]'
local args = {words = 1000, temperature = 1.0, seed = 1111, outf = 'generated.txt',
              ['log-interval'] = 100}
local numeric = {words = true, temperature = true, seed = true, ['log-interval'] = true}
local checkpoint
local i = 1
while i <= #arg do
  local flag = arg[i]:match('^%-%-(.+)$')
  if flag then
    if args[flag] == nil and flag ~= 'data' then error(('unknown option --%s\n%s'):format(flag, usage), 0) end
    local value = arg[i + 1]
    if value == nil then error(('--%s needs a value\n%s'):format(flag, usage), 0) end
    if numeric[flag] then
      value = tonumber(value) or error(('--%s expects a number, got %s'):format(flag, value), 0)
    end
    args[flag] = value
    i = i + 2
  else
    if checkpoint then error(usage, 0) end
    checkpoint = arg[i]
    i = i + 1
  end
end
if not checkpoint then error(usage, 0) end
if args.temperature < 1e-3 then error('--temperature has to be greater or equal 1e-3', 0) end

local run = engine.checkpoint(checkpoint)
if run.name ~= 'word_language_model' then
  error(('%s was written by %s, not by word_language_model.lua'):format(checkpoint, run.name), 0)
end
local hp = run.hparams
local corpus = corpus_reader.read(args.data or hp.data)
local dictionary = corpus.dictionary
local ntokens = #dictionary
-- built before seeding: PyTorch's program unpickles its model, drawing nothing
local model = word_lm.build(hp, ntokens)
model:load_state_dict(torch.load(checkpoint).model)
model:eval()
torch.manual_seed(args.seed)

local is_transformer = hp.model == 'Transformer'
local hidden = (not is_transformer) and model:init_hidden(1) or nil
local input = torch.randint(1, ntokens + 1, {1, 1})
local out = assert(io.open(args.outf, 'w'))
torch.no_grad(function()
  for n = 0, args.words - 1 do
    local word_weights, word_idx
    if is_transformer then
      local output = model(input, false)
      word_weights = output:select(1, -1):squeeze():div(args.temperature):exp()
      word_idx = torch.multinomial(word_weights, 1):item()
      input = torch.cat({input, torch.tensor({{word_idx}}, {dtype = 'int64'})}, 1)
    else
      local output
      output, hidden = model(input, hidden)
      word_weights = output:squeeze():div(args.temperature):exp()
      word_idx = torch.multinomial(word_weights, 1):item()
      input:fill_(word_idx)
    end
    out:write(dictionary[word_idx], n % 20 == 19 and '\n' or ' ')
    if n % args['log-interval'] == 0 then print(('| Generated %d/%d words'):format(n, args.words)) end
  end
end)
out:close()
