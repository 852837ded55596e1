-- pytorch/examples' word_language_model: an LSTM, GRU, plain RNN or Transformer language model
-- trained on a text corpus with truncated back-propagation through time, plain SGD (PyTorch's
-- p.data.add_(p.grad, alpha=-lr)) after gradient clipping, and the rate divided by 4 after an
-- epoch whose validation loss did not improve.
--   engine train scripts/examples/word_language_model.lua --set data=FOLDER [--set model=GRU]
--   engine run scripts/examples/word_language_model_generate.lua CHECKPOINT [words] [temperature]
-- hp.data: a folder of train.txt, valid.txt and test.txt (one sentence per line, words split on
-- spaces), as the original's data/wikitext-2.
local torch, nn, optim, data = require 'torch', require 'nn', require 'optim', require 'data'
local word_lm = require 'word_lm'
local corpus_reader = require 'word_lm_corpus'

local eval_batch_size = 10
local eval_hidden  -- the state carried across the batches of one validation

-- The corpus arranged into batch columns (PyTorch's batchify): row t holds word t of each of
-- `bsz` columns. The pipeline's samples are rows; a batch of `bptt` rows is get_batch's chunk
-- (the last one shorter), its targets the rows one word later.
local function columns(ids, bsz, bptt)
  local nbatch = math.floor(ids:size(1) / bsz)
  local rows = ids:narrow(1, 1, nbatch * bsz):view(bsz, -1):t():contiguous()
  return data.tensors{input = rows:narrow(1, 1, rows:size(1) - 1),
                      target = rows:narrow(1, 2, rows:size(1) - 1)}:batch(bptt)
end

local corpus  -- read once by model() or data(), whichever the engine calls first
local function read_corpus(hp)
  corpus = corpus or corpus_reader.read(hp.data)
  return corpus
end

local function is_transformer(hp) return hp.model == 'Transformer' end

-- (seq * batch) x ntoken log-probabilities of a batch, and the recurrent model's new state
local function forward(model, hp, input, hidden)
  if is_transformer(hp) then return model(input):view(-1, model.decoder.out_features), nil end
  return model(input, hidden)
end

return {
  name = 'word_language_model',
  seed = 1111,
  hparams = {data = 'data/wikitext-2', model = 'LSTM', emsize = 200, nhid = 200, nlayers = 2,
             lr = 20, clip = 0.25, epochs = 40, batch_size = 20, bptt = 35, dropout = 0.2,
             tied = false, nhead = 2, checkpoint_every = 0, keep_checkpoints = 2},
  model = function(hp) return word_lm.build(hp, #read_corpus(hp).dictionary) end,
  data = function(hp)
    local c = read_corpus(hp)
    return {train = columns(c.train, hp.batch_size, hp.bptt),
            validation = columns(c.valid, eval_batch_size, hp.bptt)}
  end,
  loss = nn.NLLLoss(),
  -- plain SGD: p - lr * grad, PyTorch's manual update to the bit
  optimizer = function(params, hp) return optim.SGD(params, {lr = hp.lr}) end,
  -- lr / 4 after a validation loss no lower than the best so far
  scheduler = function(opt, hp)
    return optim.ReduceLROnPlateau(opt, {metric = 'validation.loss', factor = 0.25, patience = 0,
                                         threshold = 0})
  end,
  callbacks = {
    on_epoch_start = function(ctx) ctx.state.hidden = nil end,
    on_validation_end = function() eval_hidden = nil end,
  },
  train_batch = function(ctx, batch, hp)
    -- each batch starts from the last one's state, detached from how it was computed
    local hidden = ctx.state.hidden
    if hidden == nil and not is_transformer(hp) then
      hidden = ctx.model:init_hidden(hp.batch_size)
    end
    local output, state = forward(ctx.model, hp, batch.input, word_lm.repackage_hidden(hidden))
    ctx.state.hidden = word_lm.repackage_hidden(state)
    local loss = ctx.loss(output, batch.target:reshape(-1))
    ctx:backward(loss)
    return {loss = loss}
  end,
  evaluate_batch = function(ctx, batch, hp)
    local hidden = eval_hidden
    if hidden == nil and not is_transformer(hp) then
      hidden = ctx.model:init_hidden(eval_batch_size)
    end
    local output
    output, eval_hidden = forward(ctx.model, hp, batch.input, hidden)
    -- averaged over the split weighted by the batch's rows: PyTorch's len(data) * loss
    return {loss = ctx.loss(output, batch.target:reshape(-1))}
  end,
  trainer = function(hp)
    -- checkpoint_every: steps between checkpoints, 0 for each epoch's end
    return {epochs = hp.epochs, clip_grad_norm = hp.clip, log_every = 1,
            validate_every = 'epoch',
            checkpoint_every = hp.checkpoint_every > 0 and hp.checkpoint_every or 'epoch',
            keep_checkpoints = hp.keep_checkpoints, keep_best = 'validation.loss'}
  end,
}
