#include "engine/train/trainer.hpp"

#include <algorithm>

#include "engine/core/errors.hpp"
#include "engine/core/timer.hpp"
#include "engine/data/loader.hpp"

namespace engine::train {
namespace {

void check_spec(const TrainSpec& spec) {
  if (!spec.model.module || !spec.model.forward)
    throw core::UsageError("the script defines no model");
  if (!spec.train_data)
    throw core::UsageError("the script's data function returned no 'train' pipeline");
  if (!spec.train_data->batched())
    throw core::UsageError("the 'train' pipeline must be batched (:batch(n))");
  if (spec.validation_data && !spec.validation_data->batched()) {
    throw core::UsageError("the 'validation' pipeline must be batched (:batch(n))");
  }
  if (!spec.loss) throw core::UsageError("the script defines no loss");
  if (!spec.optimizer) throw core::UsageError("the script defines no optimizer");
  if (spec.train_data->size() == 0) throw core::DataError("the 'train' pipeline yields no batch");
}

}  // namespace

Trainer::Trainer(TrainSpec& spec, std::vector<Observer*> observers)
    : spec_(spec), observers_(std::move(observers)), window_(spec.metrics) {
  check_spec(spec_);
}

void Trainer::emit(const MetricRow& row) {
  for (auto* o : observers_) o->on_metrics(row);
}

void Trainer::log_train_window(int64_t step, double epoch) {
  if (window_.samples() == 0) return;
  MetricRow row{"train", step, epoch, clock_.seconds(), window_.averages()};
  row.values["lr"] = current_lr(*spec_.optimizer);
  emit(row);
  window_.reset();
}

std::map<std::string, double> Trainer::validate() {
  std::map<std::string, double> out;
  if (!spec_.validation_data) return out;
  torch::NoGradGuard no_grad;
  spec_.model.module->eval();
  MetricAccumulator acc(spec_.metrics);
  data::EpochReader reader(*spec_.validation_data, spec_.seed, 0);
  while (auto batch = reader.next()) {
    auto input = batch->input.to(spec_.device);
    auto target = batch->target.to(spec_.device);
    auto output = spec_.model.forward(input);
    acc.add((*spec_.loss)(output, target).item<double>(), output, target);
  }
  spec_.model.module->train();
  out = acc.averages();
  const int64_t skipped = reader.skipped() + spec_.validation_data->source().skipped_at_load();
  if (skipped > 0) out["skipped_records"] = static_cast<double>(skipped);  // skip_bad at work
  return out;
}

void Trainer::run_validation(int64_t step, double epoch) {
  if (!spec_.validation_data) return;
  last_validation_ = validate();
  emit(MetricRow{"validation", step, epoch, clock_.seconds(), last_validation_});
}

TrainResult Trainer::run() {
  clock_.reset();
  core::Timer& clock = clock_;
  const auto& opts = spec_.options;
  const auto& train_data = *spec_.train_data;
  const int64_t batches = train_data.size();
  const int64_t total_steps = opts.steps > 0 ? opts.steps : opts.epochs * batches;
  const int64_t epochs = (total_steps + batches - 1) / batches;
  const int64_t log_every = std::max<int64_t>(1, opts.log_every);

  auto& module = *spec_.model.module;
  auto& optimizer = *spec_.optimizer;
  module.train();
  int64_t step = 0;
  int64_t epoch = 0;
  for (; epoch < epochs && step < total_steps; ++epoch) {
    core::Timer epoch_clock;
    MetricAccumulator epoch_metrics(spec_.metrics);
    data::EpochReader reader(train_data, spec_.seed, epoch);
    int64_t batch_index = 0, samples = 0;
    double window_samples_start = clock.seconds();
    int64_t window_samples = 0;
    while (step < total_steps) {
      auto batch = reader.next();
      if (!batch) break;
      auto input = batch->input.to(spec_.device);
      auto target = batch->target.to(spec_.device);
      optimizer.zero_grad();
      auto output = spec_.model.forward(input);
      auto loss = (*spec_.loss)(output, target);
      loss.backward();
      optimizer.step();
      if (spec_.scheduler && spec_.scheduler->mode() == StepMode::kStep) spec_.scheduler->step();
      ++step;
      ++batch_index;
      const int64_t n = batch->size();
      samples += n;
      window_samples += n;
      {
        torch::NoGradGuard no_grad;
        const double loss_value = loss.item<double>();
        const auto values = window_.evaluate(loss_value, output.detach(), target);  // once per step
        window_.add(values, n);
        epoch_metrics.add(values, n);
      }
      const double fractional_epoch = epoch + static_cast<double>(batch_index) / batches;
      if (!observers_.empty()) {
        Progress p;
        p.epoch = epoch + 1;
        p.epochs = epochs;
        p.batch = batch_index;
        p.batches = batches;
        p.step = step;
        p.total_steps = total_steps;
        p.loss = window_.average("loss");
        const double elapsed = clock.seconds() - window_samples_start;
        p.samples_per_second = elapsed > 0 ? window_samples / elapsed : 0;
        const double per_step = clock.seconds() / static_cast<double>(step);
        p.eta_seconds = per_step * static_cast<double>(total_steps - step);
        for (auto* o : observers_) o->on_progress(p);
      }
      if (step % log_every == 0) log_train_window(step, fractional_epoch);
      if (opts.validate_every_steps > 0 && step % opts.validate_every_steps == 0) {
        run_validation(step, fractional_epoch);
      }
    }
    const double epoch_end = epoch + static_cast<double>(batch_index) / batches;
    log_train_window(step, epoch_end);
    EpochSummary summary;
    summary.epoch = epoch + 1;
    summary.lr = current_lr(optimizer);
    if (spec_.scheduler && spec_.scheduler->mode() == StepMode::kEpoch) spec_.scheduler->step();
    if (opts.validate_every_steps == 0) run_validation(step, epoch_end);
    summary.seconds = epoch_clock.seconds();
    summary.samples_per_second = summary.seconds > 0 ? samples / summary.seconds : 0;
    summary.loader_wait_fraction =
        summary.seconds > 0 ? reader.wait_seconds() / summary.seconds : 0;
    summary.skipped_records = reader.skipped() + train_data.source().skipped_at_load();
    // per-epoch data figures: /metrics/data/... in the run file
    emit(MetricRow{"data",
                   step,
                   epoch_end,
                   clock.seconds(),
                   {{"skipped_records", static_cast<double>(summary.skipped_records)},
                    {"loader_wait_fraction", summary.loader_wait_fraction},
                    {"samples_per_second", summary.samples_per_second}}});
    summary.train = epoch_metrics.averages();
    summary.validation = last_validation_;
    for (auto* o : observers_) o->on_epoch_end(summary);
  }
  TrainResult result;
  result.steps = step;
  result.epochs = epoch;
  result.seconds = clock.seconds();
  result.last_validation = last_validation_;
  return result;
}

}  // namespace engine::train
