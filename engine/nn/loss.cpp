#include "engine/nn/loss.hpp"

#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"

namespace engine::nn {
namespace {

void check_class_targets(const std::string& loss, const torch::Tensor& output,
                         const torch::Tensor& target) {
  const std::string shapes = " (output " + core::shape_string(output.sizes()) + ", target " +
                             core::shape_string(target.sizes()) + ")";
  if (output.dim() < 1 || output.dim() > 2 + 3) {
    throw core::ScriptError(loss + ": output must be N x C scores" + shapes);
  }
  if (target.scalar_type() != torch::kInt64) {
    throw core::ScriptError(loss + ": target must hold class indices (int64), got " +
                            std::string(c10::toString(target.scalar_type())) + shapes);
  }
  const bool batched = output.dim() >= 2;
  const int64_t batch = batched ? output.size(0) : 1;
  if ((batched && (target.dim() != output.dim() - 1 || target.size(0) != batch)) ||
      (!batched && target.dim() != 0)) {
    throw core::ScriptError(loss + ": target must have one class per sample" + shapes);
  }
  const int64_t classes = batched ? output.size(1) : output.size(0);
  if (target.numel() > 0) {
    const int64_t lo = target.min().item<int64_t>(), hi = target.max().item<int64_t>();
    if (lo < 0 || hi >= classes) {
      throw core::ScriptError(loss + ": class " + std::to_string((lo < 0 ? lo : hi) + 1) +
                              " is out of range 1.." + std::to_string(classes) + shapes);
    }
  }
}

}  // namespace

Reduction parse_reduction(const std::string& name) {
  if (name == "mean") return Reduction::kMean;
  if (name == "sum") return Reduction::kSum;
  if (name == "none") return Reduction::kNone;
  throw core::UsageError("reduction must be 'mean', 'sum' or 'none', got '" + name + "'");
}

Loss::Loss(Kind kind, Reduction reduction, double label_smoothing)
    : kind_(kind), reduction_(reduction), label_smoothing_(label_smoothing) {
  if (label_smoothing < 0 || label_smoothing > 1) {
    throw core::UsageError("label_smoothing must be in [0, 1]");
  }
}

std::string Loss::name() const {
  return kind_ == Kind::kNll ? "NLLLoss" : "CrossEntropyLoss";
}

torch::Tensor Loss::operator()(const torch::Tensor& output, const torch::Tensor& target) const {
  check_class_targets(name(), output, target);
  int64_t reduction = at::Reduction::Mean;
  if (reduction_ == Reduction::kSum) reduction = at::Reduction::Sum;
  if (reduction_ == Reduction::kNone) reduction = at::Reduction::None;
  constexpr int64_t kNoIgnoredClass = -100;  // PyTorch's default ignore_index
  if (kind_ == Kind::kNll) return torch::nll_loss(output, target, {}, reduction, kNoIgnoredClass);
  return torch::cross_entropy_loss(output, target, {}, reduction, kNoIgnoredClass,
                                   label_smoothing_);
}

}  // namespace engine::nn
