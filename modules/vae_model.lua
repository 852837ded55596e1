-- pytorch/examples' vae: a variational autoencoder of MNIST digits (784 -> 400 -> 20 means and
-- log-variances, a sample of z, 20 -> 400 -> 784 probabilities) and its loss, the reconstruction's
-- binary cross-entropy plus the KL divergence from N(0, I), both summed over the batch.
local torch, nn = require 'torch', require 'nn'

local VAE = nn.Module:extend('VAE')

function VAE:init()
  self.fc1 = nn.Linear(784, 400)
  self.fc21 = nn.Linear(400, 20)
  self.fc22 = nn.Linear(400, 20)
  self.fc3 = nn.Linear(20, 400)
  self.fc4 = nn.Linear(400, 784)
end

function VAE:encode(x)
  local h1 = nn.F.relu(self.fc1(x))
  return self.fc21(h1), self.fc22(h1)
end

-- z = mu + eps * std, eps drawn from torch's generator (in evaluation too, as the original)
function VAE:reparameterize(mu, logvar)
  local std = torch.exp(0.5 * logvar)
  local eps = torch.randn_like(std)
  return mu + eps * std
end

function VAE:decode(z)
  local h3 = nn.F.relu(self.fc3(z))
  return torch.sigmoid(self.fc4(h3))
end

-- returns the reconstruction (N x 784), mu and logvar
function VAE:forward(x)
  local mu, logvar = self:encode(x:view(-1, 784))
  local z = self:reparameterize(mu, logvar)
  return self:decode(z), mu, logvar
end

-- Reconstruction + KL divergence losses summed over all elements and the batch; the KL term is
-- 0.5 * sum(1 + log(sigma^2) - mu^2 - sigma^2) (Kingma and Welling 2014, appendix B)
function VAE.loss_function(recon_x, x, mu, logvar)
  local BCE = nn.F.binary_cross_entropy(recon_x, x:view(-1, 784), {reduction = 'sum'})
  local KLD = -0.5 * torch.sum(1 + logvar - mu:pow(2) - logvar:exp())
  return BCE + KLD
end

return VAE
