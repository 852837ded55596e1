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
#include "engine/core/log.hpp"
#include "engine/core/memory.hpp"
#include "engine/core/metric_names.hpp"
#include "engine/data/device_prefetcher.hpp"
#include "engine/data/loader.hpp"
#include "engine/nn/parameter_slots.hpp"
#include "engine/train/adadelta.hpp"
#include "engine/train/batch_forward.hpp"
#include "engine/train/checkpoint.hpp"
#include "engine/train/data_parallel.hpp"
#include "engine/train/evaluator.hpp"
#include "engine/train/nonfinite_input.hpp"
#include "engine/train/optimizer_state_key.hpp"
#include "engine/train/run_length.hpp"
#include "engine/train/scheduler.hpp"
#include "engine/train/sgd.hpp"

namespace engine::train {
namespace {

// A loss cannot be differentiated through integers: say so before libtorch's own text would.
void check_trainable_output(const torch::Tensor& output) {
  if (!output.defined() || output.is_floating_point() || output.is_complex()) return;
  throw core::ScriptError(
      "the model's forward returned " + core::dtype_name(output.scalar_type()) + " values (shape " +
      core::shape_string(output.sizes()) +
      "): a model trained by the built-in step must return floating-point scores, "
      "log-probabilities or values; an integer output (argmax, topk's indices, a cast) has no "
      "gradient. Return the scores, and take argmax in metrics or predict");
}

constexpr int kNanWarnings = 5;  // skipped batches reported one by one; the rest are counted

// The metrics a split's rows are sure to hold; nothing when a hook may add names of its own.
std::optional<std::vector<std::string>> certain_metrics(const TrainSpec& spec,
                                                        const std::string& split) {
  const bool hooked =
      split == "train" ? bool(spec.hooks.train_batch) : bool(spec.hooks.evaluate_batch);
  if (hooked) return std::nullopt;
  std::vector<std::string> names{"loss"};
  names.insert(names.end(), spec.metrics.begin(), spec.metrics.end());
  for (const auto& custom : spec.custom_metrics) names.push_back(custom.name);
  return names;
}

// A typo in a watched metric fails before the first step, not after the first epoch.
void check_watched(const TrainSpec& spec, const MetricGoal& goal, const std::string& who) {
  if (goal.split == "validation" && !spec.validation_data) {
    throw core::UsageError(who + " watches " + goal.text() +
                           " but the script has no validation data");
  }
  const auto names = certain_metrics(spec, goal.split);
  if (!names || std::find(names->begin(), names->end(), goal.name) != names->end()) return;
  std::vector<std::string> logged;
  for (const auto& name : *names) logged.push_back(goal.split + "." + name);
  throw core::UsageError(who + " watches " + goal.text() +
                         ", which the run does not log (it logs " + core::join(logged) +
                         "; add the metric to 'metrics')");
}

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
  if (!spec.loss && !spec.hooks.train_batch) throw core::UsageError("the script defines no loss");
  if (!spec.optimizer) throw core::UsageError("the script defines no optimizer");
  if (spec.train_data->size() == 0) throw core::DataError("the 'train' pipeline yields no batch");
  if (spec.validation_data && spec.validation_data->size() == 0) {
    // a run that would validate nothing and say nothing: no rows, no early stopping, no best
    throw core::DataError("the 'validation' pipeline yields no batch (" +
                          spec.validation_data->describe() +
                          "); leave 'validation' out of what data() returns to train without it");
  }
  const auto& o = spec.options;
  if (o.accumulate < 1) throw core::UsageError("trainer accumulate must be >= 1");
  if (o.early_stopping) check_watched(spec, o.early_stopping->goal, "early_stopping");
  if (o.checkpoint.keep_best && !o.checkpoint.folder.empty())
    check_watched(spec, *o.checkpoint.keep_best, "keep_best");
  if (spec.scheduler && !spec.scheduler->watched_metric().empty()) {
    check_watched(spec, parse_goal(spec.scheduler->watched_metric()), spec.scheduler->name());
  }
  for (const auto& named : spec.optimizers) {
    if (named.scheduler && !named.scheduler->watched_metric().empty()) {
      check_watched(spec, parse_goal(named.scheduler->watched_metric()),
                    named.scheduler->name() + " of '" + named.name + "'");
    }
  }
  check_precision(o.precision, spec.device);
  if (dynamic_cast<torch::optim::LBFGS*>(spec.optimizer.get())) {
    if (o.accumulate > 1 || spec.hooks.train_batch || o.loss_scale.active(o.precision)) {
      throw core::UsageError(
          "LBFGS re-evaluates the loss inside its step: it runs with the built-in step only "
          "(no train_batch hook, accumulate = 1, no float16 or loss_scale)");
    }
  }
}

}  // namespace

Trainer::Trainer(TrainSpec& spec, std::vector<Observer*> observers, std::string run_file,
                 distributed::Group* group)
    : spec_(spec), observers_(std::move(observers)), run_file_(std::move(run_file)) {
  check_spec(spec_);
  // one process on a GPU goes through the all-reduce as well (DDP with a world of one), so that
  // one GPU exercises the path a job of several takes
  if (group && (group->size() > 1 || group->device().is_cuda())) {
    parallel_ = std::make_unique<DataParallel>(*group, spec_);  // the pipelines become shares
    state_.world_size = group->size();
  }
  check_several_optimizers();
  check_targets_.emplace(*spec_.train_data);
  state_.window = MetricAccumulator(spec_.metrics, spec_.custom_metrics);
  state_.epoch_metrics = MetricAccumulator(spec_.metrics, spec_.custom_metrics);
  const auto& scaling = spec_.options.loss_scale;
  use_scaler_ = scaling.active(spec_.options.precision);
  scaler_ = GradScaler(scaling.init_scale, scaling.growth_factor, scaling.backoff_factor,
                       scaling.growth_interval);
  state_.grad_scale = scaler_.current_scale();
  lbfgs_ = dynamic_cast<torch::optim::LBFGS*>(spec_.optimizer.get()) != nullptr;
  // a hook, LBFGS's closure, on_nan = 'skip' and SyncBatchNorm's agreement on a NaN all need
  // each batch's loss on the host before the step goes on
  deferred_ = spec_.options.deferred_reads.value_or(spec_.device.is_cuda()) &&
              !spec_.hooks.train_batch && !lbfgs_ && spec_.options.on_nan == NanPolicy::kError &&
              !(parallel_ && parallel_->synchronised_batchnorm());
  if (spec_.options.cuda_graphs) check_graphable();
  if (spec_.options.channels_last) to_channels_last(*spec_.model.module);
  parameters_ = nn::unique_parameters(*spec_.model.module);
  stepped_ = parameters_;
  if (spec_.options.precision == Precision::kFloat16Master) {
    master_ = std::make_unique<MasterWeights>(*spec_.model.module, *spec_.optimizer, torch::kHalf);
    stepped_ = master_->optimizer_parameters();
  }
  prepare_scaler();  // after master_: where the scaler's state lives
  batches_per_epoch_ = spec_.train_data->size();
  const int64_t k = spec_.options.accumulate;
  steps_per_epoch_ = (batches_per_epoch_ + k - 1) / k;
  total_steps_ = planned_steps(spec_);
  epochs_ = (total_steps_ + steps_per_epoch_ - 1) / steps_per_epoch_;
}

Trainer::~Trainer() = default;

void Trainer::resume_from(const std::string& checkpoint_path) {
  auto restored = load_checkpoint(checkpoint_path, spec_);
  // the accumulators' metric lists come from the script; their sums from the checkpoint, where
  // a distributed run saved them summed over its ranks: rank 0 alone takes them back
  MetricAccumulator window(spec_.metrics, spec_.custom_metrics);
  MetricAccumulator epoch_metrics(spec_.metrics, spec_.custom_metrics);
  if (!parallel_ || parallel_->leader()) {
    window.restore(restored.window.sums(), restored.window.samples(), restored.window.counts());
    epoch_metrics.restore(restored.epoch_metrics.sums(), restored.epoch_metrics.samples(),
                          restored.epoch_metrics.counts());
  }
  // epoch_position counts one rank's samples: the same global batches with another world
  const int64_t world = parallel_ ? parallel_->size() : 1;
  if (restored.world_size != world) {
    restored.epoch_position = restored.epoch_position * restored.world_size / world;
    core::log::info("resuming a run of {} processes with {}", restored.world_size, world);
  }
  restored.world_size = world;
  state_ = std::move(restored);
  state_.window = std::move(window);
  state_.epoch_metrics = std::move(epoch_metrics);
  scaler_.restore(state_.grad_scale, state_.grad_scale_tracker);
  elapsed_before_ = state_.elapsed;
  last_checkpoint_ = checkpoint_path;
  for (const auto& [name, value] : state_.last_validation) best_validation_[name] = value;
  // the paths the checkpoint recorded are where the run was written; its files are now beside
  // the checkpoint read, and the keep policy must act on those, never on the original's
  namespace fs = std::filesystem;
  const fs::path folder = fs::path(checkpoint_path).parent_path();
  auto beside = [&](const std::string& recorded) {
    return recorded.empty() ? recorded : (folder / fs::path(recorded).filename()).string();
  };
  for (auto& kept : state_.checkpoints) kept = beside(kept);
  state_.best_checkpoint = beside(state_.best_checkpoint);
}

bool Trainer::finished() const {
  const auto& es = spec_.options.early_stopping;
  return state_.step >= total_steps_ || state_.epoch >= epochs_ ||
         (es && state_.early_stopping.stale >= es->patience);
}

void Trainer::emit(const MetricRow& row) {
  ++state_.rows[row.split];
  for (auto* o : observers_) o->on_metrics(row);
}

double Trainer::fractional_epoch() const {
  return static_cast<double>(state_.epoch) +
         static_cast<double>(state_.epoch_batches) / static_cast<double>(batches_per_epoch_);
}

void Trainer::log_train_window() {
  settle();
  if (parallel_) parallel_->reduce(state_.window);
  if (state_.window.samples() == 0) return;
  MetricRow row{"train", state_.step, fractional_epoch(), elapsed(), state_.window.averages()};
  add_rates(row.values);
  if (use_scaler_) row.values["loss_scale"] = scaler_.current_scale();
  emit(row);
  state_.window.reset();
}

// ---- StepContext ----

bool Trainer::backward(const torch::Tensor& loss) {
  if (!loss.defined() || !loss.requires_grad()) {
    throw core::UsageError(
        "backward needs the loss tensor computed from the model's output (it has no gradient)");
  }
  if (deferred_) {
    // read with the others at the next log step (settle); detached, so that it does not keep
    // the step's autograd graph alive (a graph kept alive across a CUDA graph's recording
    // holds AccumulateGrad nodes of another stream, which breaks the capture)
    batch_loss_tensor_ = loss.detach();
  } else if (!check_loss(loss)) {
    return false;
  }
  AutocastScope no_autocast(Precision::kFloat32, spec_.device);  // backward runs outside autocast
  core::Activity activity("the backward pass of step", state_.step + 1);
  auto scaled = loss;
  if (spec_.options.accumulate > 1) scaled = scaled / static_cast<double>(spec_.options.accumulate);
  if (use_scaler_) scaled = scaled_loss(scaled);
  if (parallel_) {
    parallel_->backward(scaled, synchronise_backward());
  } else {
    scaled.backward();
  }
  return true;
}

bool Trainer::check_loss(const torch::Tensor& loss) {
  // one read of the value per batch: the check and the message share it
  const double value = loss.numel() == 1 ? loss.item<double>() : loss.detach().sum().item<double>();
  batch_loss_ = value;
  const bool finite = std::isfinite(value);
  bool finite_everywhere = finite;
  if (parallel_ && parallel_->synchronised_batchnorm()) {
    finite_everywhere = parallel_->maximum({finite ? 0.0 : 1.0})[0] == 0;
  }
  if (!finite_everywhere) {
    const std::string where = "at step " + std::to_string(state_.step + 1) + " (epoch " +
                              std::to_string(state_.epoch + 1) + ", batch " +
                              std::to_string(state_.epoch_batches + 1) + ")";
    const std::string what =
        finite
            ? "the loss is not finite on another rank (with SyncBatchNorm the ranks skip together)"
            : "the loss is " + core::number_string(value);
    auto data_note = [&]() -> std::string {
      if (!batch_in_step_) return "";
      return nonfinite_input_note(*batch_in_step_, spec_.train_data->source().describe());
    };
    if (spec_.options.on_nan == NanPolicy::kError) {
      const std::string note = data_note();
      if (!note.empty()) throw core::TrainingError(what + " " + where + note);
      throw core::TrainingError(what + " " + where +
                                "; lower the learning rate, clip gradients (clip_grad_norm) "
                                "or set on_nan = 'skip' to leave such batches out");
    }
    ++state_.epoch_nan_skipped;
    batch_nan_ = true;
    if (state_.epoch_nan_skipped <= kNanWarnings)
      core::log::warn("{} {}{}: batch skipped", what, where, data_note());
    // the other ranks' all-reduce waits for this one: it takes part, adding nothing
    if (parallel_ && synchronise_backward()) parallel_->backward_nothing();
    return false;
  }
  return true;
}

bool Trainer::synchronise_backward() const {
  if (lbfgs_) return true;  // every evaluation of its closure is a whole step's gradient
  return micro_ + 1 >= spec_.options.accumulate || state_.epoch_batches + 1 >= batches_per_epoch_;
}

bool Trainer::step() {
  if (!spec_.optimizers.empty()) {
    throw core::UsageError("ctx:step(): the script has several optimizers (" + optimizer_names() +
                           "): name the one to step, ctx:step('" + spec_.optimizers[0].name + "')");
  }
  if (batch_stepped_) {
    throw core::UsageError("train_batch called ctx:step() twice for one batch");
  }
  batch_stepped_ = true;
  if (++micro_ < spec_.options.accumulate) return false;
  optimizer_step();
  return true;
}

void Trainer::log(const std::map<std::string, double>& values) {
  // each name becomes a dataset of the run file: refused here, not at the row's write
  for (const auto& [name, value] : values) core::check_path_name("ctx:log's metric", name);
  for (const auto& [name, value] : values) logged_[name] = value;
}

void Trainer::stop(const std::string& reason) {
  stop_reason_ =
      reason.empty() ? "stopped by the script at step " + std::to_string(state_.step) : reason;
  if (parallel_) {
    stop_requested_ = true;  // the ranks stop together, at the next sync point
  } else {
    stop_ = true;
  }
}

// ---- the loop ----

BatchResult Trainer::optimize_batch(const data::Batch& batch) {
  core::Activity activity("the forward pass and loss of step", state_.step + 1);
  // what check_loss looks into when the loss is not finite; gone once the batch is
  batch_in_step_ = &batch;
  struct Forget {
    const data::Batch*& at;
    ~Forget() { at = nullptr; }
  } forget{batch_in_step_};
  if (spec_.options.cuda_graphs) {
    if (auto replayed = graphed_batch(batch)) return *replayed;
    // the last replay left its gradients in place (the graph's own memory): an eager backward
    // must not add to them; and the scale it left on the device is the one to go on with
    release_gradients(*spec_.optimizer);
    if (!scales_on_device_) pull_scaler();
  }
  return eager_batch(batch);
}

BatchResult Trainer::eager_batch(const data::Batch& batch) {
  logged_.clear();
  batch_stepped_ = false;
  batch_nan_ = false;
  BatchResult result;
  bool built_in = false;  // the step below, not a hook's or LBFGS's
  if (parallel_) parallel_->before_forward();
  {
    AutocastScope autocast(spec_.options.precision, spec_.device);
    if (spec_.hooks.train_batch) {
      result = spec_.hooks.train_batch(*this, batch);
    } else if (lbfgs_) {
      result = lbfgs_batch(batch);
    } else {
      auto output = forward_batch(spec_.model, batch, spec_.device, input_layout(spec_.options));
      check_trainable_output(output);
      const auto target = batch.target.to(spec_.device);
      if (master_) output = output.to(torch::kFloat32);  // the loss of a float16 model in float32
      (*check_targets_)(*spec_.loss, output, target, batch.target_range);
      auto loss = (*spec_.loss)(output, target);
      if (step_part_end_) step_part_end_(StepPart::kForward);
      backward(loss);
      if (step_part_end_) step_part_end_(StepPart::kBackward);
      result.output = output;
      if (!deferred_) result.values["loss"] = batch_loss_;
      built_in = true;
    }
  }
  if (!spec_.optimizers.empty()) {
    count_named_steps();  // a batch is a step of the run, whichever optimizers it stepped
  } else if (!batch_stepped_) {
    step();  // a hook that leaves stepping to the trainer
  }
  if (built_in && step_part_end_) step_part_end_(StepPart::kOptimizer);
  return result;
}

void Trainer::step_batch(const data::Batch& batch) {
  optimize_batch(batch);
}

void Trainer::run_batch(const data::Batch& batch) {
  BatchResult result = optimize_batch(batch);
  const int64_t n = batch.size();
  state_.epoch_batches += 1;
  state_.epoch_samples += n;
  state_.samples_seen += n;
  window_samples_ += n;
  if (batch_nan_) return;  // its values would turn every average into NaN
  torch::NoGradGuard no_grad;
  for (const auto& [name, value] : logged_) result.values[name] = value;
  torch::Tensor output, target;  // the built-in metrics need both
  if (batch.target.defined()) {
    output = result.output;
    target = batch.target.to(spec_.device);
  }
  if (deferred_) {
    auto pending =
        state_.window.measure_pending(batch_loss_tensor_, result.values, output, target, n);
    pending.step = state_.step + (micro_ > 0 ? 1 : 0);  // the step this batch is part of
    pending.epoch = state_.epoch + 1;
    pending.batch = state_.epoch_batches;
    pending_.push_back(std::move(pending));
    batch_loss_tensor_ = torch::Tensor();
    return;
  }
  const auto values = state_.window.measure(result.values, output, target, n);
  state_.window.add(values);
  state_.epoch_metrics.add(values);
}

void Trainer::settle() {
  // the loss scale and the skipped steps, for the row and the checkpoint: read with the
  // pending values in one copy when there are any
  if (pending_.empty()) {
    pull_scaler();
    return;
  }
  std::vector<double> scaler_values;
  const auto batches = read_pending(pending_, scaler_tensors(), &scaler_values);
  take_scaler_values(scaler_values);
  for (size_t i = 0; i < batches.size(); ++i) {
    const auto loss = batches[i].means.find("loss");
    if (loss != batches[i].means.end() && !std::isfinite(loss->second)) {
      const PendingBatch& at = pending_[i];
      const std::string what = "the loss is " + core::number_string(loss->second) + " at step " +
                               std::to_string(at.step) + " (epoch " + std::to_string(at.epoch) +
                               ", batch " + std::to_string(at.batch) + "), read at step " +
                               std::to_string(state_.step);
      pending_.clear();
      throw core::TrainingError(
          what + ": on " + spec_.device.str() +
          " the loss is read at log steps, so the steps after it ran on; lower the learning "
          "rate, clip gradients (clip_grad_norm) or set on_nan = 'skip' to leave such batches "
          "out (which reads the loss every step)");
    }
    state_.window.add(batches[i]);
    state_.epoch_metrics.add(batches[i]);
  }
  pending_.clear();
}

void Trainer::after_step() {
  const auto& o = spec_.options;
  if (spec_.scheduler && spec_.scheduler->mode() == StepMode::kStep) spec_.scheduler->step();
  if (!observers_.empty()) {
    Progress p;
    p.epoch = state_.epoch + 1;
    p.epochs = epochs_;
    p.batch = state_.epoch_batches;
    p.batches = batches_per_epoch_;
    p.step = state_.step;
    p.total_steps = total_steps_;
    p.loss = [this] {
      settle();
      return state_.window.average("loss");
    };
    const double window_time = clock_.seconds() - window_start_;
    p.samples_per_second = window_time > 0 ? window_samples_ / window_time : 0;
    const double per_step =
        clock_.seconds() / static_cast<double>(std::max<int64_t>(1, steps_here_));
    p.eta_seconds = per_step * static_cast<double>(total_steps_ - state_.step);
    p.lr = current_lr(*spec_.optimizer);
    for (auto* obs : observers_) obs->on_progress(p);
  }
  const bool log_step = state_.step % std::max<int64_t>(1, o.log_every) == 0;
  if (log_step) {
    log_train_window();
    window_start_ = clock_.seconds();
    window_samples_ = 0;
  }
  if (o.validate_every_steps > 0 && state_.step % o.validate_every_steps == 0) run_validation();
  if ((o.checkpoint.every_steps > 0 && state_.step % o.checkpoint.every_steps == 0) ||
      checkpoint_due_) {
    checkpoint();
  }
  check_interrupt_between_steps(log_step);
}

void Trainer::train_epoch() {
  const bool fresh = state_.epoch_position == 0 && state_.epoch_batches == 0;
  if (fresh) {
    state_.epoch_samples = state_.epoch_skipped = state_.epoch_nan_skipped = 0;
    state_.epoch_overflow_skipped = 0;
    state_.epoch_metrics.reset();
    if (spec_.hooks.on_epoch_start) spec_.hooks.on_epoch_start(*this);
  }
  core::Timer epoch_clock;
  const int64_t samples_before = state_.epoch_samples;
  const int64_t skipped_before = state_.epoch_skipped;
  // on CUDA: batches pinned, sent as the source's bytes and normalised on the GPU
  const bool cuda = spec_.device.is_cuda();
  data::EpochReader reader(*spec_.train_data, spec_.seed, state_.epoch, state_.epoch_position, cuda,
                           cuda);
  // one batch read ahead, its copy to the device overlapping this step (on the CPU as is)
  data::DevicePrefetcher batches([&reader] { return reader.next(); }, spec_.device,
                                 reader.device_transforms(), check_targets_->reads_every_batch());
  bool exhausted = false;
  int64_t skipped_here = 0;  // by the batches trained so far, not the one read ahead
  while (!stop_ && state_.step < total_steps_) {
    auto batch = [&] {
      core::Activity activity("reading the training data for step", state_.step + 1);
      return batches.next();
    }();
    if (!batch) {
      exhausted = true;
      break;
    }
    state_.epoch_position = batch->position;
    skipped_here = batch->skipped_so_far;
    state_.epoch_skipped = skipped_before + skipped_here;
    const int64_t steps_before = state_.step;
    run_batch(*batch);
    if (state_.step != steps_before) {
      if (steps_here_ == 1) core::reset_peak_device_bytes(spec_.device);  // after warm-up
      after_step();
    }
  }
  state_.epoch_skipped = skipped_before + (exhausted ? reader.skipped() : skipped_here);
  const bool epoch_complete = exhausted || state_.epoch_batches >= batches_per_epoch_;
  if (!epoch_complete && !stop_ && state_.step >= total_steps_) {
    finish_inside_epoch(reader.wait_seconds(), epoch_clock.seconds(),
                        state_.epoch_samples - samples_before);
    return;
  }
  if (micro_ > 0) {
    if (!stop_ && state_.step < total_steps_) {
      optimizer_step();  // the epoch's last, shorter accumulation group
      after_step();
    } else {
      release_all_gradients();
      micro_ = 0;
    }
  }
  end_epoch(reader.wait_seconds(), epoch_clock.seconds(), state_.epoch_samples - samples_before);
}

TrainResult Trainer::run() {
  clock_.reset();
  window_start_ = 0;
  window_samples_ = 0;
  steps_here_ = 0;
  spec_.model.module->train();
  release_all_gradients();
  if (parallel_) parallel_->broadcast_model();
  while (!stop_ && state_.step < total_steps_ && state_.epoch < epochs_) train_epoch();
  if (stop_reason_.empty()) {
    stop_reason_ = spec_.options.steps > 0
                       ? "reached " + std::to_string(total_steps_) + " steps"
                       : "finished " + std::to_string(spec_.options.epochs) + " epochs";
  }
  if (!spec_.options.checkpoint.folder.empty()) checkpoint();  // the final state
  TrainResult result;
  result.steps = state_.step;
  result.epochs = state_.epoch;
  result.seconds = elapsed();
  result.last_train = last_train_;
  result.last_validation = state_.last_validation;
  result.best_validation = best_validation_;
  result.stop_reason = stop_reason_;
  result.last_checkpoint = last_checkpoint_;
  result.best_checkpoint = state_.best_checkpoint;
  return result;
}

}  // namespace engine::train