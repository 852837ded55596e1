#include "engine/train/evaluator.hpp"

#include "engine/core/errors.hpp"
#include "engine/data/loader.hpp"
#include "engine/train/batch_forward.hpp"
#include "engine/train/metrics.hpp"

namespace engine::train {

Evaluator::Mode::Mode(TrainSpec& spec)
    : module_(*spec.model.module), was_training_(module_.is_training()) {
  module_.eval();
}

Evaluator::Mode::~Mode() {
  module_.train(was_training_);
}

Evaluator::Evaluator(TrainSpec& spec, StepContext* parent) : spec_(spec), parent_(parent) {
  if (!spec_.model.module || !spec_.model.forward)
    throw core::UsageError("the script defines no model");
}

bool Evaluator::backward(const torch::Tensor&) {
  throw core::UsageError("ctx:backward() cannot be called in evaluate_batch");
}

bool Evaluator::step() {
  throw core::UsageError("ctx:step() cannot be called in evaluate_batch");
}

void Evaluator::log(const std::map<std::string, double>& values) {
  for (const auto& [name, value] : values) logged_[name] = value;
}

// Standalone, the pass is the whole run: it ends anyway.
void Evaluator::stop(const std::string& reason) {
  if (parent_) parent_->stop(reason);
}

BatchResult Evaluator::evaluate_batch(const data::Batch& batch) {
  return evaluate_batch(batch, nullptr);
}

BatchResult Evaluator::evaluate_batch(const data::Batch& batch, TargetCheck* check_targets) {
  logged_.clear();
  BatchResult result;
  AutocastScope autocast(spec_.options.precision, spec_.device);
  if (spec_.hooks.evaluate_batch) {
    result = spec_.hooks.evaluate_batch(*this, batch);
  } else {
    result.output = forward_batch(spec_.model, batch, spec_.device);
    if (spec_.loss && batch.target.defined()) {
      const auto target = batch.target.to(spec_.device);
      if (check_targets) {
        (*check_targets)(*spec_.loss, result.output, target);
      } else {
        spec_.loss->check_targets(result.output, target);
      }
      result.values["loss"] =
          (*spec_.loss)(result.output, target).to(torch::kFloat64).item<double>();
    }
  }
  for (const auto& [name, value] : logged_) result.values[name] = value;
  return result;
}

std::map<std::string, double> Evaluator::run(const data::Pipeline& pipeline,
                                             const BatchOutputs& on_batch) {
  Mode mode(spec_);
  TargetCheck check_targets(pipeline);
  MetricAccumulator metrics(spec_.metrics, spec_.custom_metrics);
  data::EpochReader reader(pipeline, spec_.seed, 0);
  while (auto batch = reader.next()) {
    const BatchResult result = evaluate_batch(*batch, &check_targets);
    if (on_batch) on_batch(*batch, result.output);
    if (!batch->target.defined()) continue;
    metrics.add(metrics.measure(result.values, result.output, batch->target.to(spec_.device),
                                batch->size()));
  }
  int64_t skipped_here = reader.skipped();
  if (combine_) combine_(metrics, skipped_here);
  auto out = metrics.averages();
  // every rank loaded the whole source: its load-time skips are counted once
  const int64_t skipped = skipped_here + pipeline.source().skipped_at_load();
  if (skipped > 0) out["skipped_records"] = static_cast<double>(skipped);  // skip_bad at work
  return out;
}

}  // namespace engine::train
