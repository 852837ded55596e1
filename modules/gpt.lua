-- A small GPT-style Transformer language model: token and position embeddings, `layers`
-- pre-norm blocks of causal self-attention and an MLP, a final LayerNorm and a linear head.
-- Names follow GPT-2's (wte, wpe, h.N.ln_1, h.N.attn.c_attn, ..., ln_f, lm_head), attention is
-- written here in Lua with a causal mask.
--   nn.model('gpt', {vocab_size = 1024, context = 128, layers = 4, heads = 4, width = 256})
-- Input N x T token ids (int64, 1-based, T <= context); output logits N x T x vocab_size.
local torch, nn = require 'torch', require 'nn'

local gpt = {}

local CausalSelfAttention = nn.Module:extend('CausalSelfAttention')
gpt.CausalSelfAttention = CausalSelfAttention

function CausalSelfAttention:init(width, heads, context, dropout)
  assert(width % heads == 0, 'gpt: width must be divisible by heads')
  self.heads = heads
  self.c_attn = nn.Linear(width, 3 * width)
  self.c_proj = nn.Linear(width, width)
  self.attn_dropout = nn.Dropout(dropout)
  self.resid_dropout = nn.Dropout(dropout)
  local position = torch.arange(1, context + 1)
  -- true above the diagonal: a position may not attend to later ones
  self:register_buffer('mask', position:view(-1, 1):lt(position:view(1, -1)))
end

function CausalSelfAttention:forward(x)
  local n, t, width = x:size(1), x:size(2), x:size(3)
  local head_width = width / self.heads
  local q, k, v = self.c_attn(x):split(width, 3)
  local function heads(y) return y:view(n, t, self.heads, head_width):transpose(2, 3) end
  q, k, v = heads(q), heads(k), heads(v)
  local scores = q:matmul(k:transpose(3, 4)) * (1 / math.sqrt(head_width))
  local mask = self.mask:narrow(1, 1, t):narrow(2, 1, t)
  local weights = self.attn_dropout(scores:masked_fill(mask, -math.huge):softmax(4))
  local y = weights:matmul(v):transpose(2, 3):contiguous():view(n, t, width)
  return self.resid_dropout(self.c_proj(y))
end

local Block = nn.Module:extend('Block')
gpt.Block = Block

function Block:init(width, heads, context, dropout)
  self.ln_1 = nn.LayerNorm({width})
  self.attn = CausalSelfAttention(width, heads, context, dropout)
  self.ln_2 = nn.LayerNorm({width})
  self.mlp = nn.Sequential {
    nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width), nn.Dropout(dropout),
  }
end

function Block:forward(x)
  x = x + self.attn(self.ln_1(x))
  return x + self.mlp(self.ln_2(x))
end

local GPT = nn.Module:extend('GPT')
gpt.GPT = GPT

function GPT:init(options)
  options = options or {}
  local width, context = options.width or 256, options.context or 128
  local dropout = options.dropout or 0.1
  self.context = context
  self.wte = nn.Embedding(options.vocab_size or 1024, width)
  self.wpe = nn.Embedding(context, width)
  self.drop = nn.Dropout(dropout)
  local blocks = {}
  for i = 1, options.layers or 4 do
    blocks[i] = Block(width, options.heads or 4, context, dropout)
  end
  self.h = nn.ModuleList(blocks)
  self.ln_f = nn.LayerNorm({width})
  self.lm_head = nn.Linear(width, options.vocab_size or 1024, {bias = false})
  -- GPT-2's initialisation: normal(0, 0.02) weights, zero biases
  for name, p in self:named_parameters() do
    if name:match('weight$') and p:dim() == 2 then
      nn.init.normal_(p, 0, 0.02)
    elseif name:match('bias$') and not name:match('ln_') then
      nn.init.zeros_(p)
    end
  end
end

function GPT:forward(tokens)
  local t = tokens:size(2)
  if t > self.context then
    error(('gpt: sequence of %d tokens is longer than the context of %d'):format(t, self.context), 2)
  end
  local positions = torch.arange(1, t + 1):view(1, t)
  local x = self.drop(self.wte(tokens) + self.wpe(positions))
  for _, block in ipairs(self.h) do x = block(x) end
  return self.lm_head(self.ln_f(x))
end

gpt.gpt = function(options) return GPT(options) end

return gpt
