#include "engine/nn/batchnorm.hpp"

#include <torch/autograd.h>
#include <torch/nn/functional/batchnorm.h>

namespace engine::nn {
namespace {

struct ProcessSumCapsule : torch::CustomClassHolder {
  explicit ProcessSumCapsule(std::shared_ptr<const ProcessSum> p) : processes(std::move(p)) {}
  std::shared_ptr<const ProcessSum> processes;
};

// A sum over the processes that autograd differentiates: the gradient of every process's
// share is the sum of all processes' gradients (each process's loss depends on every share),
// as the all-reduce in PyTorch's SyncBatchNorm backward.
struct SumOverProcesses : torch::autograd::Function<SumOverProcesses> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const std::shared_ptr<const ProcessSum>& processes) {
    ctx->saved_data["processes"] =
        c10::IValue::make_capsule(c10::make_intrusive<ProcessSumCapsule>(processes));
    auto sum = x.clone();
    processes->sum(sum);
    return sum;
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto capsule = c10::static_intrusive_pointer_cast<ProcessSumCapsule>(
        ctx->saved_data["processes"].toCapsule());
    auto sum = grads[0].contiguous().clone();
    capsule->processes->sum(sum);
    return {sum, torch::Tensor()};
  }
};

const char* kind_name(BatchNormKind kind) {
  switch (kind) {
    case BatchNormKind::k1d:
      return "BatchNorm1d";
    case BatchNormKind::k2d:
      return "BatchNorm2d";
    case BatchNormKind::k3d:
      return "BatchNorm3d";
    case BatchNormKind::kSync:
      break;
  }
  return "SyncBatchNorm";
}

}  // namespace

BatchNormImpl::BatchNormImpl(BatchNormKind kind, const torch::nn::BatchNormOptions& options)
    : options(options), kind_(kind) {
  reset();
}

// The same parameters and buffers, under the same names, as libtorch's (and PyTorch's)
// BatchNorm, so checkpoints and state dicts are interchangeable.
void BatchNormImpl::reset() {
  const int64_t n = options.num_features();
  if (options.affine()) {
    weight = register_parameter("weight", torch::ones({n}));
    bias = register_parameter("bias", torch::zeros({n}));
  } else {
    weight = register_parameter("weight", torch::Tensor(), /*requires_grad=*/false);
    bias = register_parameter("bias", torch::Tensor(), /*requires_grad=*/false);
  }
  if (options.track_running_stats()) {
    running_mean = register_buffer("running_mean", torch::zeros({n}));
    running_var = register_buffer("running_var", torch::ones({n}));
    num_batches_tracked =
        register_buffer("num_batches_tracked", torch::tensor(0, torch::dtype(torch::kLong)));
  } else {
    running_mean = register_buffer("running_mean", torch::Tensor());
    running_var = register_buffer("running_var", torch::Tensor());
    num_batches_tracked = register_buffer("num_batches_tracked", torch::Tensor());
  }
}

void BatchNormImpl::pretty_print(std::ostream& stream) const {
  stream << std::boolalpha << kind_name(kind_) << "(" << options.num_features()
         << ", eps=" << options.eps() << ", momentum=";
  if (options.momentum().has_value()) {
    stream << options.momentum().value();
  } else {
    stream << "None";
  }
  stream << ", affine=" << options.affine()
         << ", track_running_stats=" << options.track_running_stats() << ")";
}

void BatchNormImpl::synchronise(ProcessSum processes) {
  processes_ = std::make_shared<const ProcessSum>(std::move(processes));
}

void BatchNormImpl::check_input(const torch::Tensor& input) const {
  // TORCH_CHECK formats its message only when the check fails: nothing built per forward
  const int64_t d = input.dim();
  switch (kind_) {
    case BatchNormKind::k1d:
      TORCH_CHECK(d == 2 || d == 3, "expected 2D or 3D input (got ", d, "D input)");
      break;
    case BatchNormKind::k2d:
      TORCH_CHECK(d == 4, "expected 4D input (got ", d, "D input)");
      break;
    case BatchNormKind::k3d:
      TORCH_CHECK(d == 5, "expected 5D input (got ", d, "D input)");
      break;
    case BatchNormKind::kSync:
      TORCH_CHECK(d >= 2, "expected at least 2D input (got ", d, "D input)");
      break;
  }
  TORCH_CHECK(input.size(1) == options.num_features(), "expected ", options.num_features(),
              " channels (dimension 2), got ", input.size(1));
}

double BatchNormImpl::next_average_factor() {
  const auto& momentum = options.momentum();
  if (!is_training() || !options.track_running_stats()) return momentum.value_or(0.0);
  num_batches_tracked += 1;
  if (momentum.has_value()) return momentum.value();
  return 1.0 / num_batches_tracked.item<double>();  // cumulative moving average
}

torch::Tensor BatchNormImpl::forward(const torch::Tensor& input) {
  check_input(input);
  const double average_factor = next_average_factor();
  if (processes_ && processes_->size > 1 && is_training()) {
    return synchronised_forward(input, average_factor);
  }
  return torch::nn::functional::detail::batch_norm(input, running_mean, running_var, weight, bias,
                                                   is_training() || !options.track_running_stats(),
                                                   average_factor, options.eps());
}

// Each process's per-channel mean, sum of squared deviations and count, in its own row of a
// [processes, 3, channels] tensor that the sum over processes fills (a gather that autograd
// differentiates), then combined as parallel variance algorithms do (Chan et al.): exact in
// float arithmetic however the batch is split, unlike a sum of squares.
torch::Tensor BatchNormImpl::synchronised_forward(const torch::Tensor& input,
                                                  double average_factor) {
  const auto& group = *processes_;
  const int64_t channels = options.num_features();
  const bool reduced =
      input.scalar_type() == torch::kHalf || input.scalar_type() == torch::kBFloat16;
  const auto x = reduced ? input.to(torch::kFloat32) : input;
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
  const int64_t local_count = channels > 0 ? x.numel() / channels : 0;

  torch::Tensor mean_here, m2_here;
  if (local_count > 0) {
    auto [var, mean] = torch::var_mean(x, dims, /*unbiased=*/false);
    mean_here = mean;
    m2_here = var * static_cast<double>(local_count);
  } else {
    mean_here = torch::zeros({channels}, x.options());
    m2_here = torch::zeros({channels}, x.options());
  }
  const auto count_here = torch::full({channels}, static_cast<double>(local_count), x.options());
  const auto mine = torch::stack({mean_here, m2_here, count_here}).unsqueeze(0);
  const auto before = torch::zeros({group.rank, 3, channels}, x.options());
  const auto after = torch::zeros({group.size - group.rank - 1, 3, channels}, x.options());
  const auto all = SumOverProcesses::apply(torch::cat({before, mine, after}), processes_);

  const auto means = all.select(1, 0), m2s = all.select(1, 1), counts = all.select(1, 2);
  const auto total = counts.sum(0);  // [channels], the same number in every channel
  // checked from this process's count (the ranks' shares are equal): reading the total would
  // make the host wait for the device in every layer, 53 times a ResNet-50 step
  TORCH_CHECK(local_count * group.size > 1,
              "expected more than 1 value per channel when training, over all ", group.size,
              " processes together");
  const auto mean = (means * counts).sum(0) / total;
  const auto var = (m2s + counts * (means - mean).pow(2)).sum(0) / total;

  if (options.track_running_stats()) {
    torch::NoGradGuard no_grad;
    running_mean.mul_(1 - average_factor)
        .add_(mean.detach().to(running_mean.dtype()), average_factor);
    running_var.mul_(1 - average_factor)
        .add_((var.detach() * (total / (total - 1))).to(running_var.dtype()), average_factor);
  }

  std::vector<int64_t> shape(static_cast<size_t>(x.dim()), 1);
  shape[1] = channels;
  auto y = (x - mean.view(shape)) * torch::rsqrt(var + options.eps()).view(shape);
  if (options.affine()) y = y * weight.view(shape) + bias.view(shape);
  return reduced ? y.to(input.scalar_type()) : y;
}

}  // namespace engine::nn
