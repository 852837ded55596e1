-- pytorch/examples' siamese_network model: torchvision's ResNet-18 with a one-channel first
-- convolution and without its classifier reads each of two images; the two 512 features, side
-- by side, go through two linear layers to the probability that both show the same digit.
local torch, nn = require 'torch', require 'nn'
local resnet = require 'resnet'

local SiameseNetwork = nn.Module:extend('SiameseNetwork')

-- Xavier-uniform weights and 0.01 biases for the linear layers
local function init_weights(m)
  if tostring(m):match('^Linear') then
    nn.init.xavier_uniform_(m.weight)
    m.bias.data:fill_(0.01)
  end
end

function SiameseNetwork:init()
  local net = resnet.resnet18()
  net.conv1 = nn.Conv2d(1, 64, {7, 7}, {stride = 2, padding = 3, bias = false})
  self.fc_in_features = net.fc.in_features
  local children = {}  -- every child but the last (fc), in order
  for name, child in net:named_children() do
    if name ~= 'fc' then children[#children + 1] = child end
  end
  self.resnet = nn.Sequential(children)
  self.fc = nn.Sequential{nn.Linear(self.fc_in_features * 2, 256), nn.ReLU(),
                          nn.Linear(256, 1)}
  self.sigmoid = nn.Sigmoid()
  self.resnet:apply(init_weights)
  self.fc:apply(init_weights)
end

function SiameseNetwork:forward_once(x)
  local output = self.resnet(x)
  return output:view(output:size(1), -1)
end

function SiameseNetwork:forward(input1, input2)
  local output = torch.cat({self:forward_once(input1), self:forward_once(input2)}, 2)
  return self.sigmoid(self.fc(output))
end

return SiameseNetwork
