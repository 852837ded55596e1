-- pytorch/examples' mnist_rnn model: an LSTM reads each 28 x 28 digit a row at a time; its last
-- output goes through batch norm, Dropout2d (on an [N, C] input: single elements, as PyTorch 1.13
-- drops them) and two linear layers to 10 log-probabilities.
local nn = require 'nn'

local Net = nn.Module:extend('MnistRNN')

function Net:init()
  self.rnn = nn.LSTM(28, 64, {batch_first = true})
  self.batchnorm = nn.BatchNorm1d(64)
  self.dropout1 = nn.Dropout2d(0.25)
  self.dropout2 = nn.Dropout2d(0.5)
  self.fc1 = nn.Linear(64, 32)
  self.fc2 = nn.Linear(32, 10)
end

-- input: N x 1 x 28 x 28 images, read as N sequences of 28 rows
function Net:forward(input)
  local output = self.rnn(input:reshape(-1, 28, 28))
  output = output:select(2, -1)  -- the last row's output
  output = self.dropout1(self.batchnorm(output))
  output = self.dropout2(nn.F.relu(self.fc1(output)))
  return nn.F.log_softmax(self.fc2(output), 2)
end

return Net
