#include "engine/train/target_check.hpp"

#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"

namespace engine::train {

TargetCheck::TargetCheck(const data::Pipeline& pipeline)
    : classes_(pipeline.source().class_count()), data_(pipeline.source().describe()) {}

void TargetCheck::operator()(const nn::Loss& loss, const torch::Tensor& output,
                             const torch::Tensor& target,
                             std::optional<std::pair<int64_t, int64_t>> range) {
  if (done_ || !loss.takes_class_targets()) return;
  if (!classes_) {
    loss.check_targets(output, target, range);  // a source that cannot vouch: every batch
    return;
  }
  if (output.dim() < 1) return;  // the loss's own shape check says what is wrong
  const int64_t outputs = nn::Loss::class_count(output);
  if (*classes_ > outputs) {
    throw core::ScriptError(
        loss.name() + ": the data " + data_ + " has " + std::to_string(*classes_) +
        " classes but the model outputs " + std::to_string(outputs) +
        " scores per sample (output " + core::shape_string(output.sizes()) + "): class " +
        std::to_string(*classes_) + " is out of range 1.." + std::to_string(outputs));
  }
  done_ = true;
}

}  // namespace engine::train
