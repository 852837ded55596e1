#include "engine/train/evaluator.hpp"

#include "engine/core/errors.hpp"
#include "engine/core/metric_names.hpp"
#include "engine/data/device_prefetcher.hpp"
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

bool Evaluator::step(const std::string& optimizer) {
  throw core::UsageError("ctx:step('" + optimizer + "') cannot be called in evaluate_batch");
}

void Evaluator::log(const std::map<std::string, double>& values) {
  for (const auto& [name, value] : values) core::check_path_name("ctx:log's metric", name);
  for (const auto& [name, value] : values) logged_[name] = value;
}

// Standalone, the pass is the whole run: it ends anyway.
void Evaluator::stop(const std::string& reason) {
  if (parent_) parent_->stop(reason);
}

BatchResult Evaluator::evaluate_batch(const data::Batch& batch) {
  return evaluate_batch(batch, nullptr, nullptr);
}

BatchResult Evaluator::evaluate_batch(const data::Batch& batch, TargetCheck* check_targets,
                                      torch::Tensor* pending_loss) {
  logged_.clear();
  BatchResult result;
  AutocastScope autocast(spec_.options.precision, spec_.device);
  if (spec_.hooks.evaluate_batch) {
    result = spec_.hooks.evaluate_batch(*this, batch);
  } else {
    result.output = forward_batch(spec_.model, batch, spec_.device, input_layout(spec_.options));
    if (spec_.options.precision == Precision::kFloat16Master) {
      result.output = result.output.to(torch::kFloat32);  // a float16 model's, as training reads it
    }
    if (spec_.loss && batch.target.defined()) {
      const auto target = batch.target.to(spec_.device);
      if (check_targets) {
        (*check_targets)(*spec_.loss, result.output, target, batch.target_range);
      } else {
        spec_.loss->check_targets(result.output, target);
      }
      const auto loss = (*spec_.loss)(result.output, target);
      if (pending_loss) {
        *pending_loss = loss.detach();  // read with the split's other values at its end
      } else {
        result.values["loss"] = loss.to(torch::kFloat64).item<double>();
      }
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
  // as the trainer's deferred reads: the split's values read in one copy at its end, where no
  // hook and no caller looks at a batch's output on the host
  const bool deferred = spec_.options.deferred_reads.value_or(spec_.device.is_cuda()) &&
                        !spec_.hooks.evaluate_batch && !on_batch;
  std::vector<PendingBatch> pending;
  const bool cuda = spec_.device.is_cuda();  // pinned bytes, normalised on the GPU
  data::EpochReader reader(pipeline, spec_.seed, 0, 0, cuda, cuda);
  data::DevicePrefetcher batches([&reader] { return reader.next(); }, spec_.device,
                                 reader.device_transforms(), check_targets.reads_every_batch());
  while (auto batch = batches.next()) {
    torch::Tensor loss;
    const BatchResult result = evaluate_batch(*batch, &check_targets, deferred ? &loss : nullptr);
    if (on_batch) on_batch(*batch, result.output);
    if (!batch->target.defined()) {
      // no target for the built-in metrics; a script's evaluate_batch may still measure the
      // batch (a pair network drawing its own targets, a generative model's loss)
      if (!result.values.empty()) {
        metrics.add(
            metrics.measure(result.values, torch::Tensor(), torch::Tensor(), batch->size()));
      }
      continue;
    }
    const auto target = batch->target.to(spec_.device);
    if (deferred) {
      pending.push_back(
          metrics.measure_pending(loss, result.values, result.output, target, batch->size()));
    } else {
      metrics.add(metrics.measure(result.values, result.output, target, batch->size()));
    }
  }
  for (const auto& batch_metrics : read_pending(pending)) metrics.add(batch_metrics);
  int64_t skipped_here = reader.skipped();
  if (combine_) combine_(metrics, skipped_here);
  auto out = metrics.averages();
  // every rank loaded the whole source: its load-time skips are counted once
  const int64_t skipped = skipped_here + pipeline.source().skipped_at_load();
  if (skipped > 0) out["skipped_records"] = static_cast<double>(skipped);  // skip_bad at work
  return out;
}

}  // namespace engine::train
