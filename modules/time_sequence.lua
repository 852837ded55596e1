-- pytorch/examples' time_sequence_prediction model: two LSTM cells and a linear read-out over a
-- sequence, one step at a time, and `future` more steps fed its own predictions.
local torch, nn = require 'torch', require 'nn'

local Sequence = nn.Module:extend('Sequence')

function Sequence:init(hidden)
  self.hidden = hidden or 51
  self.lstm1 = nn.LSTMCell(1, self.hidden)
  self.lstm2 = nn.LSTMCell(self.hidden, self.hidden)
  self.linear = nn.Linear(self.hidden, 1)
end

-- input: N x T values; returns N x (T + future) predictions, each of the next value
function Sequence:forward(input, future)
  local n = input:size(1)
  -- the states in the input's dtype and on its device
  local h, c = input:new_zeros(n, self.hidden), input:new_zeros(n, self.hidden)
  local h2, c2 = input:new_zeros(n, self.hidden), input:new_zeros(n, self.hidden)
  local outputs, output = {}, nil
  for _, input_t in ipairs({input:split(1, 2)}) do
    h, c = self.lstm1(input_t, {h, c})
    h2, c2 = self.lstm2(h, {h2, c2})
    output = self.linear(h2)
    outputs[#outputs + 1] = output
  end
  for _ = 1, future or 0 do
    h, c = self.lstm1(output, {h, c})
    h2, c2 = self.lstm2(h, {h2, c2})
    output = self.linear(h2)
    outputs[#outputs + 1] = output
  end
  return torch.cat(outputs, 2)
end

return Sequence
