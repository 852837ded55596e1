-- The tensor API against PyTorch: tests/fixtures/tensor_ops.h5 holds inputs and PyTorch's
-- outputs (tests/fixtures/generate_tensor_ops.py); each case below computes the same thing
-- through the Lua API, with 1-based dims and indices. No expected value is typed in here.
local here = arg[0]:match('(.*/)')
package.path = here .. '?.lua;' .. package.path
local spec = require 'spec'
local torch = require 'torch'
local nn = require 'nn'

local fixtures = torch.load(here .. '../fixtures/tensor_ops.h5')

local unpack = table.unpack or unpack

-- Runs f on the inputs with gradients on; returns their gradients.
local function grads(f, ...)
  local inputs = {...}
  for _, t in ipairs(inputs) do t:requires_grad() end
  f(unpack(inputs))
  local out = {}
  for k, t in ipairs(inputs) do out[k] = t.grad end
  return out
end

-- case name -> function(c) returning {out = ..., out2 = ..., grad_a = ...}
local cases = {
  add = function(c) return {out = c.a + c.b} end,
  sub = function(c) return {out = c.a - c.b} end,
  mul = function(c) return {out = c.a * c.b} end,
  div = function(c) return {out = c.a / c.b} end,
  add_broadcast = function(c) return {out = c.a + c.b} end,
  add_number = function(c) return {out = c.a + 2.5} end,
  number_div = function(c) return {out = 3 / c.a} end,
  pow_number = function(c) return {out = c.a ^ 2} end,
  pow_tensor = function(c) return {out = c.a ^ c.b} end,
  neg = function(c) return {out = -c.a} end,
  int_add_int = function(c) return {out = c.a + 3} end,
  int_mul_float = function(c) return {out = c.a * 0.5} end,
  int_div = function(c) return {out = c.a / 2} end,
  remainder = function(c) return {out = c.a % 3} end,
  maximum = function(c) return {out = c.a:maximum(c.b)} end,
  where = function(c) return {out = torch.where(c.a:gt(0), c.a, c.b)} end,
  sum = function(c) return {out = c.a:sum()} end,
  sum_dim2 = function(c) return {out = c.a:sum(2)} end,
  mean_dim1_keepdim = function(c) return {out = c.a:mean(1, {keepdim = true})} end,
  prod_dim2 = function(c) return {out = c.a:prod(2)} end,
  std = function(c) return {out = c.a:std()} end,
  var_dim2 = function(c) return {out = c.a:var(-1)} end,
  logsumexp_dim2 = function(c) return {out = c.a:logsumexp(2)} end,
  max_dim2 = function(c) local v, i = c.a:max(2); return {out = v, out2 = i} end,
  min_dim1 = function(c) local v, i = c.a:min(1); return {out = v, out2 = i} end,
  argmax_dim2 = function(c) return {out = c.a:argmax(2)} end,
  argmax_all = function(c) return {out = c.a:argmax()} end,
  softmax_dim2 = function(c) return {out = c.a:softmax(2)} end,
  log_softmax_dim2 = function(c) return {out = c.a:log_softmax(-1)} end,
  view = function(c) return {out = c.a:view(6, 4)} end,
  permute = function(c) return {out = c.a:permute(3, 1, 2)} end,
  transpose = function(c) return {out = c.a:transpose(1, 3)} end,
  narrow = function(c) return {out = c.a:narrow(3, 2, 2)} end,
  select = function(c) return {out = c.a:select(2, 3)} end,
  unsqueeze = function(c) return {out = c.a:unsqueeze(2)} end,
  flatten = function(c) return {out = c.a:flatten(2)} end,
  chunk = function(c) local x, y = c.a:chunk(2, 3); return {out = x, out2 = y} end,
  cat = function(c) return {out = torch.cat({c.a, c.b}, 2)} end,
  stack = function(c) return {out = torch.stack({c.a, c.b}, 1)} end,
  index_range = function(c) return {out = c.a[{{}, {2, 3}, {}}]} end,
  index_number = function(c) return {out = c.a[{2, 3}]} end,
  index_select = function(c) return {out = c.a:index_select(2, c.b)} end,
  gather = function(c) return {out = c.a:gather(2, c.b)} end,
  scatter = function(c) return {out = c.a:scatter(2, c.b, 9)} end,
  masked_fill = function(c) return {out = c.a:masked_fill(c.b, -1)} end,
  masked_select = function(c) return {out = c.a:masked_select(c.b)} end,
  index_mask = function(c) return {out = c.a[c.b]} end,
  split_sizes = function(c) local x, y = c.a:split({1, 3}, 3); return {out = x, out2 = y} end,
  ['repeat'] = function(c) return {out = c.a:repeat_tensor(2, 3)} end,
  unflatten = function(c) return {out = c.a:unflatten(2, {2, 2})} end,
  sort_desc = function(c) local v, i = c.a:sort(2, {descending = true}); return {out = v, out2 = i} end,
  topk = function(c) local v, i = c.a:topk(2, 2); return {out = v, out2 = i} end,
  cumsum = function(c) return {out = c.a:cumsum(1)} end,
  clamp = function(c) return {out = c.a:clamp(-0.5, 0.5)} end,
  norm = function(c) return {out = c.a:norm()} end,
  norm_dim2 = function(c) return {out = c.a:norm(1, 2)} end,
  bmm = function(c) return {out = c.a:bmm(c.b)} end,
  outer = function(c) return {out = torch.outer(c.a, c.b)} end,
  einsum = function(c) return {out = torch.einsum('ij,jk->ik', {c.a, c.b})} end,
  matmul = function(c) return {out = c.a:matmul(c.b)} end,
  linalg_inv = function(c) return {out = torch.linalg.inv(c.a)} end,
  linalg_det = function(c) return {out = torch.linalg.det(c.a)} end,
  linalg_solve = function(c) return {out = torch.linalg.solve(c.a, c.b)} end,
  linalg_cholesky = function(c) return {out = torch.linalg.cholesky(c.a)} end,
  linalg_qr = function(c) local q, r = torch.linalg.qr(c.a); return {out = q, out2 = r} end,
  linalg_svd = function(c) local u, s, vh = torch.linalg.svd(c.a); return {out = u, out2 = s, out3 = vh} end,
  linalg_eigh = function(c) local v, e = torch.linalg.eigh(c.a); return {out = v, out2 = e} end,
  linalg_vector_norm = function(c) return {out = torch.linalg.vector_norm(c.a, 3, 2)} end,
  linalg_matrix_norm = function(c) return {out = torch.linalg.matrix_norm(c.a)} end,
  linalg_matrix_norm_nuc = function(c) return {out = torch.linalg.matrix_norm(c.a, 'nuc')} end,
  linalg_pinv = function(c) return {out = torch.linalg.pinv(c.a)} end,
  F_gelu = function(c) return {out = nn.F.gelu(c.a)} end,
  F_silu = function(c) return {out = nn.F.silu(c.a)} end,
  F_linear = function(c) return {out = nn.F.linear(c.a, c.b)} end,
  F_conv2d = function(c) return {out = nn.F.conv2d(c.a, c.b, c.c, {stride = 2, padding = 1})} end,
  F_conv1d = function(c) return {out = nn.F.conv1d(c.a, c.b, {padding = 1})} end,
  F_max_pool2d = function(c) return {out = nn.F.max_pool2d(c.a, 2)} end,
  F_avg_pool2d = function(c) return {out = nn.F.avg_pool2d(c.a, 3, {stride = 2, padding = 1})} end,
  F_batch_norm = function(c) return {out = nn.F.batch_norm(c.a, c.b, c.c)} end,
  F_layer_norm = function(c) return {out = nn.F.layer_norm(c.a, {4})} end,
  F_embedding = function(c) return {out = nn.F.embedding(c.a, c.b)} end,
  F_cross_entropy = function(c) return {out = nn.F.cross_entropy(c.a, c.b)} end,
  F_cross_entropy_smooth = function(c) return {out = nn.F.cross_entropy(c.a, c.b, {label_smoothing = 0.1})} end,
  F_nll_loss_sum = function(c) return {out = nn.F.nll_loss(c.a, c.b, {reduction = 'sum'})} end,
  F_mse_loss = function(c) return {out = nn.F.mse_loss(c.a, c.b)} end,
  F_l1_loss = function(c) return {out = nn.F.l1_loss(c.a, c.b, {reduction = 'none'})} end,
  F_bce_with_logits = function(c) return {out = nn.F.binary_cross_entropy_with_logits(c.a, c.b)} end,
  F_pad = function(c) return {out = nn.F.pad(c.a, {1, 2, 0, 1}, {value = 0.5})} end,
  F_pad_reflect = function(c) return {out = nn.F.pad(c.a, {1, 1, 1, 1}, {mode = 'reflect'})} end,
  F_interpolate_nearest = function(c) return {out = nn.F.interpolate(c.a, {scale_factor = 2})} end,
  F_interpolate_bilinear = function(c)
    return {out = nn.F.interpolate(c.a, {size = {5, 6}, mode = 'bilinear', align_corners = false})}
  end,
  mm = function(c) return {out = torch.mm(c.a, c.b)} end,
  dot = function(c) return {out = c.a:dot(c.b)} end,
  grad_mul_exp = function(c)
    local g = grads(function(a, b) (a * b + a:exp()):sum():backward() end, c.a, c.b)
    return {grad_a = g[1], grad_b = g[2]}
  end,
  grad_matmul_tanh = function(c)
    local g = grads(function(a, b) a:matmul(b):tanh():sum():backward() end, c.a, c.b)
    return {grad_a = g[1], grad_b = g[2]}
  end,
  grad_nll_log_softmax = function(c)
    local g = grads(function(a) nn.NLLLoss()(a:log_softmax(2), c.b):backward() end, c.a)
    return {grad_a = g[1]}
  end,
  grad_with_gradient = function(c)
    local g = grads(function(a) (a * 3):backward(c.b) end, c.a)
    return {grad_a = g[1]}
  end,
}
for _, name in ipairs({'abs', 'exp', 'tanh', 'sigmoid', 'relu', 'sin', 'cos', 'floor', 'ceil', 'round',
                       'sign', 'log', 'sqrt', 'rsqrt'}) do
  cases[name] = function(c) return {out = c.a[name](c.a)} end
end
for _, name in ipairs({'eq', 'ne', 'lt', 'le', 'gt', 'ge'}) do
  cases[name] = function(c) return {out = c.a[name](c.a, c.b)} end
end

-- In-place variants: x:op_(...) must change x and return x itself.
local inplace_arguments = {
  add = function(c) return c.b end, sub = function(c) return c.b end,
  mul = function(c) return c.b end, div = function(c) return c.b end,
  pow = function() return 3 end, fmod = function() return 0.7 end,
  remainder = function() return 3 end, clamp = function() return -0.5, 0.25 end,
  masked_fill = function(c) return c.b, 7 end, scatter = function(c) return 2, c.b, -2 end,
}
for _, name in ipairs({'neg', 'abs', 'exp', 'sin', 'cos', 'floor', 'ceil', 'round', 'sign', 'relu',
                       'sigmoid', 'tanh', 'square', 't', 'log', 'sqrt', 'rsqrt', 'logical_not'}) do
  inplace_arguments[name] = function() end
end
for name, arguments in pairs(inplace_arguments) do
  cases['inplace_' .. name] = function(c)
    local x = c.a
    local returned = x[name .. '_'](x, arguments(c))
    if not rawequal(returned, x) then error(name .. '_ did not return its tensor', 0) end
    return {out = x}
  end
end

-- issue 55: the names pytorch/examples and torchvision.models call
for _, name in ipairs({'log1p', 'log2', 'log10', 'expm1', 'tan', 'asin', 'acos', 'atan', 'sinh',
                       'cosh', 'erf', 'reciprocal', 'trunc', 'frac'}) do
  cases['x_' .. name] = function(c) return {out = torch[name](c.a)} end
end
cases.x_atan2 = function(c) return {out = c.a:atan2(c.b)} end
cases.x_tril = function(c) return {out = c.a:tril(-1)} end
cases.x_triu = function(c) return {out = torch.triu(c.a, 1)} end
cases.x_diag = function(c) return {out = c.a:diag()} end
cases.x_diag_vector = function(c) return {out = c.a:diag(1)} end
cases.x_diff = function(c) return {out = c.a:diff(1, 1)} end
cases.x_roll = function(c) return {out = c.a:roll(1, 2)} end
cases.x_roll_flat = function(c) return {out = c.a:roll(2)} end
cases.x_flip = function(c) return {out = c.a:flip({1, 3})} end
cases.x_swapaxes = function(c) return {out = c.a:swapaxes(1, 3)} end
cases.x_movedim = function(c) return {out = c.a:movedim(1, 3)} end
cases.x_nonzero = function(c) return {out = c.a:nonzero()} end
cases.x_view_as = function(c) return {out = c.a:view_as(c.b)} end
cases.x_expand_as = function(c) return {out = c.a:expand_as(c.b)} end
cases.x_type_as = function(c) return {out = c.a:type_as(c.b)} end
cases.x_new_full = function(c) return {out = c.a:new_full({2, 2}, 7)} end
cases.x_sum_keepdim_positional = function(c) return {out = c.a:sum(2, true)} end
cases.x_meshgrid = function(c)
  local g1, g2 = torch.meshgrid(c.a, c.b, {indexing = 'ij'})
  return {out = g1, out2 = g2}
end
cases.x_multinomial = function(c) torch.manual_seed(7); return {out = c.a:multinomial(3)} end
cases.F_elu = function(c) return {out = nn.F.elu(c.a, 0.5)} end
cases.F_leaky_relu = function(c) return {out = nn.F.leaky_relu(c.a, 0.2)} end
cases.F_softplus = function(c) return {out = nn.F.softplus(c.a, {beta = 2, threshold = 5})} end
cases.F_relu6 = function(c) return {out = nn.F.relu6(c.a)} end
cases.F_hardswish = function(c) return {out = nn.F.hardswish(c.a)} end
cases.F_normalize = function(c) return {out = nn.F.normalize(c.a)} end
cases.F_adaptive_avg_pool2d = function(c) return {out = nn.F.adaptive_avg_pool2d(c.a, {3, 5})} end
cases.F_pixel_shuffle = function(c) return {out = nn.F.pixel_shuffle(c.a, 2)} end
cases.F_cosine_similarity = function(c) return {out = nn.F.cosine_similarity(c.a, c.b)} end
cases.F_one_hot = function(c) return {out = nn.F.one_hot(c.a, 5)} end
cases.F_binary_cross_entropy = function(c) return {out = nn.F.binary_cross_entropy(c.a, c.b)} end
cases.F_kl_div = function(c) return {out = nn.F.kl_div(c.a, c.b, {reduction = 'batchmean'})} end

for _, name in ipairs({'isnan', 'isinf', 'isfinite'}) do
  cases['x_' .. name] = function(c) return {out = c.a[name](c.a)} end
end
cases.x_clip = function(c) return {out = c.a:clip(-0.3, 0.2)} end
cases.x_reshape_as = function(c) return {out = c.a:reshape_as(c.b)} end
cases.x_new_zeros = function(c) return {out = c.a:new_zeros(2, 3)} end
cases.x_new_ones = function(c) return {out = c.a:new_ones({3, 2})} end
cases.x_new_tensor = function(c) return {out = c.a:new_tensor({1.5, 2.5, -3.0})} end
cases.x_swapdims = function(c) return {out = c.a:swapdims(2, 3)} end
cases.x_stride = function(c)
  return {out = torch.tensor(c.a:permute(3, 1, 2):stride(), {dtype = 'int64'})}
end
cases.x_random_ = function(c) torch.manual_seed(9); return {out = c.a:random_(2, 9)} end
cases.x_exponential_ = function(c) torch.manual_seed(10); return {out = c.a:exponential_(2)} end
for _, name in ipairs({'selu', 'mish', 'logsigmoid', 'softsign', 'hardsigmoid'}) do
  cases['F_' .. name] = function(c) return {out = nn.F[name](c.a)} end
end
cases.F_celu = function(c) return {out = nn.F.celu(c.a, 0.5)} end
cases.F_hardtanh = function(c) return {out = nn.F.hardtanh(c.a, -0.5, 0.3)} end
cases.F_glu = function(c) return {out = nn.F.glu(c.a)} end
cases.F_adaptive_avg_pool1d = function(c) return {out = nn.F.adaptive_avg_pool1d(c.a, 4)} end
cases.F_adaptive_max_pool2d = function(c) return {out = nn.F.adaptive_max_pool2d(c.a, {3, 5})} end
cases.F_huber_loss = function(c) return {out = nn.F.huber_loss(c.a, c.b, {delta = 0.5})} end

-- Type promotion over every pair of dtypes (the fixture names carry the dtypes).
local dtypes = {'bool', 'uint8', 'int8', 'int16', 'int32', 'int64', 'float16', 'bfloat16', 'float32',
                'float64'}
for _, da in ipairs(dtypes) do
  for _, db in ipairs(dtypes) do
    cases['promote_add_' .. da .. '_' .. db] = function(c) return {out = c.a + c.b} end
    cases['promote_mul_zerodim_' .. da .. '_' .. db] = function(c) return {out = c.a * c.b} end
  end
  cases['promote_number_int_' .. da] = function(c) return {out = c.a + 3} end
  cases['promote_number_float_' .. da] = function(c) return {out = c.a * 1.5} end
end

-- float16 and bfloat16 arithmetic; where PyTorch has no CPU kernel, the fixture holds its error.
for _, d in ipairs({'float16', 'bfloat16'}) do
  cases['lowp_add_' .. d] = function(c) return {out = c.a + c.b} end
  cases['lowp_mul_' .. d] = function(c) return {out = c.a * c.b} end
  cases['lowp_exp_' .. d] = function(c) return {out = c.a:exp()} end
  cases['lowp_sum_' .. d] = function(c) return {out = c.a:sum(2)} end
  cases['lowp_softmax_' .. d] = function(c) return {out = c.a:softmax(2)} end
  cases['lowp_relu_' .. d] = function(c) return {out = c.a:relu()} end
  cases['lowp_matmul_' .. d] = function(c) return {out = c.a:matmul(c.b)} end
  cases['lowp_grad_square_' .. d] = function(c)
    return {grad_a = grads(function(a) (a * a):sum():backward() end, c.a)[1]}
  end
end

-- Tolerances per dtype: relative and absolute, as torch.testing's defaults.
local tolerance = {float32 = {1.3e-6, 1e-5}, float64 = {1e-7, 1e-7}, float16 = {1e-3, 1e-5},
                   bfloat16 = {1.6e-2, 1e-5}}

-- Results defined up to a sign, which LAPACK builds choose differently (OpenBLAS's against
-- MKL's): compared with each eigenvector's first component made positive.
local up_to_sign = {linalg_eigh = {out2 = function(v) return v * v:narrow(v:dim() - 1, 1, 1):sign() end}}

local function compare(name, key, actual, expected)
  if not torch.is_tensor(actual) then error(('%s.%s: no %s computed'):format(name, key, key), 0) end
  local canonical = up_to_sign[name] and up_to_sign[name][key]
  if canonical then actual, expected = canonical(actual:detach()), canonical(expected) end
  spec.equal(actual:dtype(), expected:dtype(), name .. '.' .. key .. ' dtype')
  spec.same_list(actual:size(), expected:size(), name .. '.' .. key .. ' size')
  local tol = tolerance[expected:dtype()]
  if tol then
    local a, e = actual:detach():double(), expected:double()
    local bound = e:abs() * tol[1] + tol[2]
    local ok = (a - e):abs():le(bound):all():item()
    if not ok then
      error(('%s.%s: max difference %g'):format(name, key, (a - e):abs():max():item()), 0)
    end
  elseif not actual:equal(expected) then
    error(('%s.%s differs from PyTorch:\n%s\nexpected\n%s'):format(name, key, tostring(actual), tostring(expected)), 0)
  end
end

spec.describe('tensor ops against PyTorch', function()
  for _, name in ipairs(spec.sorted_keys(fixtures)) do
    spec.it(name, function()
      local c = fixtures[name]
      local f = cases[name]
      if not f then error('fixture case ' .. name .. ' has no Lua counterpart', 0) end
      local inputs = {a = c.a and c.a:clone(), b = c.b and c.b:clone(), c = c.c and c.c:clone()}
      if c.error then  -- PyTorch refuses this one: the engine must raise its reason as a Lua error
        local ok, message = pcall(f, inputs)
        if ok then error(name .. ': PyTorch raises "' .. c.error .. '" but the engine did not', 0) end
        if not tostring(message):find(c.error, 1, true) then
          error(('%s: expected an error with "%s", got "%s"'):format(name, c.error, tostring(message)), 0)
        end
        return
      end
      local got = f(inputs)
      for key, expected in pairs(c) do
        if key ~= 'a' and key ~= 'b' and key ~= 'c' then compare(name, key, got[key], expected) end
      end
    end)
  end
  spec.it('every Lua case has a fixture', function()
    for name in pairs(cases) do
      if not fixtures[name] then error('case ' .. name .. ' has no fixture: rerun the generator', 0) end
    end
  end)
end)

spec.finish()
