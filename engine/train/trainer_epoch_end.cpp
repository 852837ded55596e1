// What the trainer does at the end of an epoch and between steps: the data row, validation,
// the watched metrics (early stopping, the best checkpoint), checkpoints, interrupts.
#include "engine/train/trainer.hpp"

#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/lbfgs.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <limits>

#include "engine/core/activity.hpp"
#include "engine/core/device.hpp"
#include "engine/core/device_memory.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"
#include "engine/core/interrupt.hpp"
#include "engine/core/memory.hpp"
#include "engine/core/metric_names.hpp"
#include "engine/core/signals.hpp"
#include "engine/data/device_prefetcher.hpp"
#include "engine/data/loader.hpp"
#include "engine/train/adadelta.hpp"
#include "engine/train/batch_forward.hpp"
#include "engine/train/checkpoint.hpp"
#include "engine/train/data_parallel.hpp"
#include "engine/train/evaluator.hpp"
#include "engine/train/optimizer_state_key.hpp"
#include "engine/train/scheduler.hpp"
#include "engine/train/sgd.hpp"

namespace engine::train {

// The loader's bookkeeping of the epoch so far (/metrics/data): throughput, time waiting for
// data, records left out, peak memory, batches skipped for NaN or overflow.
MetricRow Trainer::emit_data_row(double loader_wait, double seconds, int64_t samples_here) {
  const auto& o = spec_.options;
  double samples_per_second = seconds > 0 ? samples_here / seconds : 0;
  int64_t skipped = state_.epoch_skipped + spec_.train_data->source().skipped_at_load();
  if (parallel_) {  // the world's throughput, and every rank's left-out records
    const auto totals =
        parallel_->sum({samples_per_second, static_cast<double>(state_.epoch_skipped)});
    samples_per_second = totals[0];
    skipped = static_cast<int64_t>(totals[1]) + spec_.train_data->source().skipped_at_load();
  }
  MetricRow data_row{"data",
                     state_.step,
                     fractional_epoch(),
                     elapsed(),
                     {{"skipped_records", static_cast<double>(skipped)},
                      {"loader_wait_fraction", seconds > 0 ? loader_wait / seconds : 0},
                      {"samples_per_second", samples_per_second},
                      {"peak_resident_bytes", static_cast<double>(core::peak_resident_bytes())}}};
  if (state_.epoch_nan_skipped > 0 || o.on_nan == NanPolicy::kSkip) {
    data_row.values["nan_skipped_batches"] = static_cast<double>(state_.epoch_nan_skipped);
  }
  if (use_scaler_) {
    data_row.values["overflow_skipped_steps"] = static_cast<double>(state_.epoch_overflow_skipped);
  }
  if (spec_.device.is_cuda()) {
    // the epoch's peaks (the run's first step, which sets up buffers once, left out); the next
    // epoch counts its own
    data_row.values["peak_device_bytes"] =
        static_cast<double>(core::peak_device_bytes(spec_.device));
    data_row.values["peak_device_reserved_bytes"] =
        static_cast<double>(core::peak_device_reserved_bytes(spec_.device));
    core::reset_peak_device_bytes(spec_.device);
  }
  emit(data_row);
  return data_row;
}

// The run's length ends inside an epoch: the epoch stays open (a longer run resumed from the
// final checkpoint goes on with it, as after an interrupt, instead of starting the next one),
// the last window is logged and the model validated at the last step unless it just was.
void Trainer::finish_inside_epoch(double loader_wait, double seconds, int64_t samples_here) {
  log_train_window();
  const auto& o = spec_.options;
  if (o.validate_every_steps == 0 || state_.step % o.validate_every_steps != 0) run_validation();
  emit_data_row(loader_wait, seconds, samples_here);
  check_interrupt();  // one that came at the last step (check_interrupt_between_steps)
}

void Trainer::end_epoch(double loader_wait, double epoch_seconds, int64_t epoch_samples_here) {
  const auto& o = spec_.options;
  log_train_window();
  EpochSummary summary;
  summary.epoch = state_.epoch + 1;
  summary.lr = current_lr(*spec_.optimizer);
  step_epoch_schedulers();
  if (parallel_) {
    MetricAccumulator epoch_metrics = state_.epoch_metrics;
    parallel_->reduce(epoch_metrics);
    summary.train = epoch_metrics.averages();
  } else {
    summary.train = state_.epoch_metrics.averages();
  }
  last_train_ = summary.train;  // before validating: keep_best and early stopping may watch it
  if (o.validate_every_steps == 0) run_validation();
  if (!spec_.validation_data) watch_metrics();  // train.* metrics, once per epoch
  summary.seconds = epoch_seconds;
  const MetricRow data_row = emit_data_row(loader_wait, epoch_seconds, epoch_samples_here);
  summary.samples_per_second = data_row.values.at("samples_per_second");
  summary.loader_wait_fraction = data_row.values.at("loader_wait_fraction");
  summary.skipped_records = static_cast<int64_t>(data_row.values.at("skipped_records"));
  summary.validation = state_.last_validation;
  summary.nan_skipped = state_.epoch_nan_skipped;
  summary.overflow_skipped = state_.epoch_overflow_skipped;
  for (auto* obs : observers_) obs->on_epoch_end(summary);
  if (spec_.hooks.on_epoch_end) spec_.hooks.on_epoch_end(*this, summary.train);
  state_.epoch += 1;
  state_.epoch_position = state_.epoch_batches = 0;
  state_.epoch_samples = state_.epoch_skipped = state_.epoch_nan_skipped = 0;
  state_.epoch_overflow_skipped = 0;
  state_.epoch_metrics.reset();
  if (o.checkpoint.every_epoch || checkpoint_due_) checkpoint();
  check_interrupt();
}

std::map<std::string, double> Trainer::validate() {
  if (!spec_.validation_data) return {};
  core::Activity activity("the validation after step", state_.step);
  Evaluator evaluator(spec_, this);
  if (parallel_) {
    evaluator.combine_with([this](MetricAccumulator& m, int64_t& skipped) {
      parallel_->reduce(m);
      skipped = static_cast<int64_t>(parallel_->sum({static_cast<double>(skipped)})[0]);
    });
  }
  return evaluator.run(*spec_.validation_data);
}

double Trainer::watched_value(const MetricGoal& goal) const {
  const auto& source = goal.split == "validation" ? state_.last_validation : last_train_;
  auto it = source.find(goal.name);
  if (it == source.end()) {
    std::vector<std::string> known;
    for (const auto& [name, v] : source) known.push_back(goal.split + "." + name);
    throw core::UsageError("the watched metric " + goal.text() + " is not logged (logged: " +
                           (known.empty() ? std::string("none") : core::join(known)) + ")");
  }
  return it->second;
}

void Trainer::track(const MetricGoal& goal, BestTracker& tracker, bool* improved) {
  const double value = watched_value(goal);
  const double min_delta = spec_.options.early_stopping && &tracker == &state_.early_stopping
                               ? spec_.options.early_stopping->min_delta
                               : 0.0;
  if (goal.better(value, tracker.best, min_delta)) {
    tracker.best = value;
    tracker.best_step = state_.step;
    tracker.stale = 0;
    if (improved) *improved = true;
  } else {
    ++tracker.stale;
  }
}

void Trainer::run_validation() {
  if (!spec_.validation_data) return;
  state_.last_validation = validate();
  for (const auto& [name, value] : state_.last_validation) {
    auto it = best_validation_.find(name);
    if (it == best_validation_.end() || parse_goal(name).better(value, it->second)) {
      best_validation_[name] = value;
    }
  }
  emit(MetricRow{"validation", state_.step, fractional_epoch(), elapsed(), state_.last_validation});
  watch_metrics();
  if (spec_.hooks.on_validation_end) spec_.hooks.on_validation_end(*this, state_.last_validation);
}

void Trainer::watch_metrics() {
  observe_schedulers();
  const auto& o = spec_.options;
  if (o.checkpoint.keep_best && !o.checkpoint.folder.empty()) {
    bool improved = false;
    track(*o.checkpoint.keep_best, state_.keep_best, &improved);
    if (improved) checkpoint_due_ = true;
  }
  if (o.early_stopping) {
    const auto& es = *o.early_stopping;
    track(es.goal, state_.early_stopping, nullptr);
    if (state_.early_stopping.stale >= es.patience && !stop_) {
      stop_ = true;
      stop_reason_ = "early stopping: " + es.goal.text() + " did not improve for " +
                     std::to_string(es.patience) + " validations (best " +
                     core::number_string(state_.early_stopping.best) + " at step " +
                     std::to_string(state_.early_stopping.best_step) + ")";
    }
  }
}

namespace {

bool inside_folder(const std::string& file, const std::string& folder) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto parent = fs::weakly_canonical(fs::path(file).parent_path(), ec);
  if (ec) return false;
  const auto own = fs::weakly_canonical(fs::path(folder), ec);
  return !ec && parent == own;
}

}  // namespace

void Trainer::checkpoint() {
  core::Activity activity("writing the checkpoint of step", state_.step);
  settle();  // the window's sums go into the checkpoint; a non-finite loss must not
  namespace fs = std::filesystem;
  const auto& policy = spec_.options.checkpoint;
  if (policy.folder.empty()) return;
  const std::string path =
      (fs::path(policy.folder) / ("ckpt-" + std::to_string(state_.step) + ".h5")).string();
  const bool best = checkpoint_due_;
  checkpoint_due_ = false;
  if (path == last_checkpoint_ && !best) return;
  const bool writer = !parallel_ || parallel_->leader();  // one file, by rank 0
  std::error_code ec;
  if (writer) fs::create_directories(policy.folder, ec);
  if (ec)
    throw core::IoError("cannot create checkpoint folder " + policy.folder + ": " + ec.message());
  // decide what the keep policy deletes before saving, so the saved list is the kept one
  std::vector<std::string> doomed;
  auto& kept = state_.checkpoints;
  kept.erase(std::remove(kept.begin(), kept.end(), path), kept.end());
  kept.push_back(path);
  const std::string old_best = state_.best_checkpoint;
  if (best) state_.best_checkpoint = path;
  while (static_cast<int64_t>(kept.size()) > std::max<int64_t>(1, policy.keep_last)) {
    if (kept.front() != state_.best_checkpoint) doomed.push_back(kept.front());
    kept.erase(kept.begin());
  }
  if (best && !old_best.empty() && old_best != path &&
      std::find(kept.begin(), kept.end(), old_best) == kept.end()) {
    doomed.push_back(old_best);
  }
  state_.elapsed = elapsed();
  for (auto* obs : observers_) obs->before_checkpoint(state_.step);
  if (parallel_) {
    // the metrics in progress as the whole world measured them; the ranks wait for the file
    TrainerState saved = state_;
    parallel_->reduce(saved.window);
    parallel_->reduce(saved.epoch_metrics);
    if (writer) save_checkpoint(path, spec_, saved, run_file_);
    parallel_->barrier();
  } else {
    save_checkpoint(path, spec_, state_, run_file_);
  }
  last_checkpoint_ = path;
  for (auto* obs : observers_) obs->on_checkpoint(path, state_.step);
  if (best) {
    for (auto* obs : observers_) obs->on_best_checkpoint(path);
  }
  for (const auto& d : doomed) {
    // only this run's own files: never a checkpoint outside its folder
    if (d == path || !writer || !inside_folder(d, policy.folder)) continue;
    fs::remove(d, ec);
    for (auto* obs : observers_) obs->on_checkpoint_removed(d);
  }
  if (spec_.hooks.on_checkpoint && writer) spec_.hooks.on_checkpoint(*this, path);
}

void Trainer::check_interrupt_between_steps(bool log_step) {
  // the same on every rank: they take the same steps over the same number of batches
  if (state_.step >= total_steps_ || state_.epoch_batches >= batches_per_epoch_) return;
  check_interrupt(log_step);
}

void Trainer::check_interrupt(bool sync_point) {
  int signal = core::pending_interrupt();
  if (parallel_) {
    if (!sync_point) return;
    const auto agreed =
        parallel_->maximum({static_cast<double>(signal), stop_requested_ ? 1.0 : 0.0});
    signal = static_cast<int>(agreed[0]);
    if (agreed[1] > 0 && !stop_) {
      stop_ = true;
      if (stop_reason_.empty()) {
        stop_reason_ =
            "stopped by the script on another rank at step " + std::to_string(state_.step);
      }
    }
  }
  if (signal == 0) return;
  checkpoint();
  const char* name = core::signal_name(signal);
  const std::string reason = "interrupted by " +
                             (name ? std::string(name) : std::to_string(signal)) + " at step " +
                             std::to_string(state_.step) +
                             (last_checkpoint_.empty() ? "" : "; checkpoint " + last_checkpoint_);
  throw core::Interrupted(reason, signal);
}

}  // namespace engine::train
