-- pytorch/examples' word_language_model models: RNNModel (an embedding, an LSTM, GRU or plain RNN,
-- a linear decoder, optionally tied to the embedding) and TransformerModel (PyTorch's
-- nn.Transformer as the base, its decoder replaced by a linear one, with sine positional
-- encodings and a causal mask). Both return log-probabilities, sequence first.
local torch, nn = require 'torch', require 'nn'

local M = {}

local RNNModel = nn.Module:extend('RNNModel')
M.RNNModel = RNNModel

local nonlinearities = {RNN_TANH = 'tanh', RNN_RELU = 'relu'}

-- rnn_type: 'LSTM', 'GRU', 'RNN_TANH' or 'RNN_RELU'
function RNNModel:init(rnn_type, ntoken, ninp, nhid, nlayers, dropout, tie_weights)
  dropout = dropout or 0.5
  self.ntoken = ntoken
  self.drop = nn.Dropout(dropout)
  self.encoder = nn.Embedding(ntoken, ninp)
  if rnn_type == 'LSTM' or rnn_type == 'GRU' then
    self.rnn = nn[rnn_type](ninp, nhid, {num_layers = nlayers, dropout = dropout})
  elseif nonlinearities[rnn_type] then
    self.rnn = nn.RNN(ninp, nhid, {num_layers = nlayers, nonlinearity = nonlinearities[rnn_type],
                                   dropout = dropout})
  else
    error(("RNNModel: model '%s' is not one of LSTM, GRU, RNN_TANH, RNN_RELU or Transformer")
          :format(tostring(rnn_type)), 3)
  end
  self.decoder = nn.Linear(nhid, ntoken)
  -- "Using the Output Embedding to Improve Language Models" (Press & Wolf 2016)
  if tie_weights then
    if nhid ~= ninp then error('RNNModel: tied weights need nhid equal to emsize', 3) end
    self.decoder.weight = self.encoder.weight
  end
  self:init_weights()
  self.rnn_type, self.nhid, self.nlayers = rnn_type, nhid, nlayers
end

-- both models' init_weights: U(-0.1, 0.1) embedding and read-out weights, a zero read-out bias
local function init_uniform(embedding, decoder)
  local initrange = 0.1
  nn.init.uniform_(embedding.weight, -initrange, initrange)
  nn.init.zeros_(decoder.bias)
  nn.init.uniform_(decoder.weight, -initrange, initrange)
end

function RNNModel:init_weights() init_uniform(self.encoder, self.decoder) end

-- input: seq x batch word ids (1-based); returns (seq * batch) x ntoken log-probabilities and
-- the recurrent state
function RNNModel:forward(input, hidden)
  local emb = self.drop(self.encoder(input))
  local output, state = self.rnn(emb, hidden)
  local decoded = self.decoder(self.drop(output))
  return nn.F.log_softmax(decoded:view(-1, self.ntoken), 2), state
end

-- zero states on the weights' device and in their dtype: {h, c} for an LSTM, h for the others
function RNNModel:init_hidden(bsz)
  local weight = self.encoder.weight
  if self.rnn_type == 'LSTM' then
    return {weight:new_zeros(self.nlayers, bsz, self.nhid),
            weight:new_zeros(self.nlayers, bsz, self.nhid)}
  end
  return weight:new_zeros(self.nlayers, bsz, self.nhid)
end

-- The state without its history (PyTorch's repackage_hidden): truncated back-propagation. nil
-- (a Transformer's) stays nil.
function M.repackage_hidden(h)
  if h == nil then return nil end
  if torch.is_tensor(h) then return h:detach() end
  local out = {}
  for i, v in ipairs(h) do out[i] = M.repackage_hidden(v) end
  return out
end

-- sin at even embedding positions, cos at odd ones, added to the sequence-first input
local PositionalEncoding = nn.Module:extend('PositionalEncoding')
M.PositionalEncoding = PositionalEncoding

function PositionalEncoding:init(d_model, dropout, max_len)
  max_len = max_len or 5000
  self.dropout = nn.Dropout(dropout or 0.1)
  local position = torch.arange(0, max_len, {dtype = 'float32'}):unsqueeze(2)
  local div_term = (torch.arange(0, d_model, 2):float() * (-math.log(10000.0) / d_model)):exp()
  -- PyTorch's pe[:, 0::2] = sin(...), pe[:, 1::2] = cos(...), interleaved
  local angles = position * div_term
  local pe = torch.stack({angles:sin(), angles:cos()}, 3):view(max_len, d_model)
  self:register_buffer('pe', pe:unsqueeze(2))  -- max_len x 1 x d_model
end

function PositionalEncoding:forward(x)
  return self.dropout(x + self.pe:narrow(1, 1, x:size(1)))
end

-- PyTorch's class TransformerModel(nn.Transformer): its encoder (nlayers layers) is used, the
-- decoder stack PyTorch's constructor builds is replaced by the linear read-out, as in Python.
local TransformerModel = nn.Transformer:extend('TransformerModel')
M.TransformerModel = TransformerModel

function TransformerModel:init(ntoken, ninp, nhead, nhid, nlayers, dropout)
  nn.Transformer.init(self, {d_model = ninp, nhead = nhead, dim_feedforward = nhid,
                             num_encoder_layers = nlayers})
  self.model_type = 'Transformer'
  self.src_mask = nil
  self.pos_encoder = PositionalEncoding(ninp, dropout or 0.5)
  self.input_emb = nn.Embedding(ntoken, ninp)
  self.ninp = ninp
  self.decoder = nn.Linear(ninp, ntoken)
  self:init_weights()
end

function TransformerModel:init_weights() init_uniform(self.input_emb, self.decoder) end

-- 0 on and below the diagonal, -inf above: each position sees itself and the past
function TransformerModel:generate_square_subsequent_mask(sz)
  return torch.log(torch.tril(torch.ones(sz, sz)))
end

-- src: seq x batch word ids; returns seq x batch x ntoken log-probabilities
function TransformerModel:forward(src, has_mask)
  if has_mask ~= false then
    if self.src_mask == nil or self.src_mask:size(1) ~= src:size(1) then
      self.src_mask = self:generate_square_subsequent_mask(src:size(1)):to(src:device())
    end
  else
    self.src_mask = nil
  end
  local x = self.pos_encoder(self.input_emb(src) * math.sqrt(self.ninp))
  local output = self.decoder(self.encoder(x, {mask = self.src_mask}))
  return nn.F.log_softmax(output, -1)
end

-- The model a word_language_model run trains, from its hyperparameters (hp.model, emsize, nhid,
-- nlayers, dropout, tied, nhead) and the corpus's word count.
function M.build(hp, ntokens)
  if hp.model == 'Transformer' then
    return TransformerModel(ntokens, hp.emsize, hp.nhead, hp.nhid, hp.nlayers, hp.dropout)
  end
  return RNNModel(hp.model, ntokens, hp.emsize, hp.nhid, hp.nlayers, hp.dropout, hp.tied)
end

return M
