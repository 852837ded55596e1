#include "engine/nn/loss.hpp"

#include <algorithm>
#include <utility>

#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"
#include "engine/core/int64_range.hpp"
#include "engine/nn/positions.hpp"

namespace engine::nn {
namespace {

// The smallest and largest class in target (int64, not empty). On CPU a plain pass over the
// values: two reductions with two reads took microseconds there.
std::pair<int64_t, int64_t> class_range(const torch::Tensor& target) {
  if (target.is_cpu()) return core::int64_range(target);
  const auto [lo, hi] = torch::aminmax(target);
  const auto both = torch::stack({lo, hi}).cpu();
  return {both[0].item<int64_t>(), both[1].item<int64_t>()};
}

std::string shapes(const torch::Tensor& output, const torch::Tensor& target) {
  return " (output " + core::shape_string(output.sizes()) + ", target " +
         core::shape_string(target.sizes()) + ")";
}

// What a class loss needs of its arguments that reading no values can tell.
void check_class_shapes(const std::string& loss, const torch::Tensor& output,
                        const torch::Tensor& target) {
  if (output.dim() < 1 || output.dim() > 2 + 3) {
    throw core::ScriptError(loss + ": output must be N x C scores" + shapes(output, target));
  }
  if (target.scalar_type() != torch::kInt64) {
    throw core::ScriptError(loss + ": target must hold class indices (int64), got " +
                            std::string(c10::toString(target.scalar_type())) +
                            shapes(output, target));
  }
  const bool batched = output.dim() >= 2;
  const int64_t batch = batched ? output.size(0) : 1;
  if ((batched && (target.dim() != output.dim() - 1 || target.size(0) != batch)) ||
      (!batched && target.dim() != 0)) {
    throw core::ScriptError(loss + ": target must have one class per sample" +
                            shapes(output, target));
  }
}

}  // namespace

Reduction parse_reduction(const std::string& name) {
  if (name == "mean") return Reduction::kMean;
  if (name == "sum") return Reduction::kSum;
  if (name == "none") return Reduction::kNone;
  if (name == "batchmean") return Reduction::kBatchMean;
  throw core::UsageError("reduction must be 'mean', 'sum' or 'none', got '" + name + "'");
}

Loss::Loss(Kind kind, Reduction reduction, double parameter, torch::Tensor weight)
    : kind_(kind), reduction_(reduction), weight_(std::move(weight)) {
  if (kind == Kind::kCrossEntropy && parameter >= 0) label_smoothing_ = parameter;
  if ((kind == Kind::kSmoothL1 || kind == Kind::kHuber) && parameter >= 0) beta_ = parameter;
  if (kind == Kind::kKlDiv) log_target_ = parameter > 0;
  if (reduction == Reduction::kBatchMean && kind != Kind::kKlDiv) {
    throw core::UsageError("reduction 'batchmean' is KLDivLoss's; " + name() +
                           " takes 'mean', 'sum' or 'none'");
  }
  if (label_smoothing_ < 0 || label_smoothing_ > 1) {
    throw core::UsageError("label_smoothing must be in [0, 1]");
  }
}

std::string Loss::name() const {
  switch (kind_) {
    case Kind::kNll:
      return "NLLLoss";
    case Kind::kCrossEntropy:
      return "CrossEntropyLoss";
    case Kind::kMse:
      return "MSELoss";
    case Kind::kL1:
      return "L1Loss";
    case Kind::kSmoothL1:
      return "SmoothL1Loss";
    case Kind::kBceWithLogits:
      return "BCEWithLogitsLoss";
    case Kind::kBce:
      return "BCELoss";
    case Kind::kKlDiv:
      return "KLDivLoss";
    case Kind::kHuber:
      return "HuberLoss";
  }
  return "Loss";
}

int64_t Loss::class_count(const torch::Tensor& output) {
  return output.dim() >= 2 ? output.size(1) : output.size(0);
}

void Loss::check_targets(const torch::Tensor& output, const torch::Tensor& target,
                         std::optional<std::pair<int64_t, int64_t>> range) const {
  if (!takes_class_targets()) return;  // the call itself checks shapes
  check_class_shapes(name(), output, target);
  if (target.numel() == 0) return;
  const int64_t classes = class_count(output);
  const auto [lo, hi] = range ? *range : class_range(target);
  if (lo < 0 || hi >= classes) {
    throw core::ScriptError(name() + ": class " + std::to_string((lo < 0 ? lo : hi) + 1) +
                            " is out of range 1.." + std::to_string(classes) +
                            shapes(output, target));
  }
}

torch::Tensor Loss::of_script_targets(const torch::Tensor& output,
                                      const torch::Tensor& target) const {
  if (!takes_class_targets()) return (*this)(output, target);
  const auto classes = zero_based_classes(target);
  check_targets(output, classes);
  return (*this)(output, classes);
}

torch::Tensor Loss::operator()(const torch::Tensor& output, const torch::Tensor& target) const {
  int64_t reduction = at::Reduction::Mean;
  if (reduction_ == Reduction::kSum) reduction = at::Reduction::Sum;
  if (reduction_ == Reduction::kNone) reduction = at::Reduction::None;
  if (takes_class_targets()) {
    check_class_shapes(name(), output, target);
    constexpr int64_t kNoIgnoredClass = -100;  // PyTorch's default ignore_index
    if (kind_ == Kind::kNll) return torch::nll_loss(output, target, {}, reduction, kNoIgnoredClass);
    return torch::cross_entropy_loss(output, target, {}, reduction, kNoIgnoredClass,
                                     label_smoothing_);
  }
  // Element-wise losses: PyTorch broadcasts with a warning; a shape mismatch is nearly always a
  // bug (N x 1 output against N targets), so it is an error here.
  if (!output.sizes().equals(target.sizes())) {
    throw core::ScriptError(name() + ": output " + core::shape_string(output.sizes()) +
                            " and target " + core::shape_string(target.sizes()) +
                            " must have the same shape");
  }
  const auto t = target.to(output.scalar_type());
  switch (kind_) {
    case Kind::kMse:
      return torch::mse_loss(output, t, reduction);
    case Kind::kL1:
      return torch::l1_loss(output, t, reduction);
    case Kind::kSmoothL1:
      return torch::smooth_l1_loss(output, t, reduction, beta_);
    case Kind::kHuber:
      return torch::huber_loss(output, t, reduction, beta_);
    case Kind::kBce:
      return torch::binary_cross_entropy(output, t, weight_, reduction);
    case Kind::kKlDiv:
      if (reduction_ == Reduction::kBatchMean) {
        const auto sum = torch::kl_div(output, t, at::Reduction::Sum, log_target_);
        return output.dim() == 0 ? sum : sum / output.size(0);
      }
      return torch::kl_div(output, t, reduction, log_target_);
    default:
      return torch::binary_cross_entropy_with_logits(output, t, {}, weight_, reduction);
  }
}

}  // namespace engine::nn
