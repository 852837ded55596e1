// The trainer's CUDA graphs: a whole step (forward, backward, optimizer update, a scaled
// step's bookkeeping) recorded once and replayed (docs/gpu.md); Trainer::graphed_batch.
#include "engine/train/trainer.hpp"

#include <torch/csrc/autograd/variable.h>
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
#include "engine/train/adadelta.hpp"
#include "engine/train/batch_forward.hpp"
#include "engine/train/checkpoint.hpp"
#include "engine/train/data_parallel.hpp"
#include "engine/train/evaluator.hpp"
#include "engine/train/optimizer_state_key.hpp"
#include "engine/train/scheduler.hpp"
#include "engine/train/sgd.hpp"

namespace engine::train {

namespace {

constexpr int64_t kGraphWarmupSteps = 3;  // eager steps before recording; the last on its stream

// Whether two batches hold tensors of the same shapes and types: a graph recorded for one
// reads the other's copy.
bool same_layout(const data::Batch& a, const data::Batch& b) {
  auto same = [](const torch::Tensor& x, const torch::Tensor& y) {
    if (x.defined() != y.defined()) return false;
    return !x.defined() || (x.sizes() == y.sizes() && x.scalar_type() == y.scalar_type() &&
                            x.device() == y.device());
  };
  if (!same(a.input, b.input) || !same(a.target, b.target) || !same(a.categorical, b.categorical) ||
      a.inputs.size() != b.inputs.size()) {
    return false;
  }
  for (const auto& [name, tensor] : a.inputs) {
    const auto other = b.inputs.find(name);
    if (other == b.inputs.end() || !same(tensor, other->second)) return false;
  }
  return true;
}

// Each group's learning rate and SGD's momentum, which a schedule may change (OneCycleLR
// cycles the momentum): the graph holds them as constants.
std::vector<double> group_lrs(torch::optim::Optimizer& optimizer) {
  std::vector<double> settings;
  for (auto& group : optimizer.param_groups()) {
    settings.push_back(group.options().get_lr());
    if (auto* sgd = dynamic_cast<torch::optim::SGDOptions*>(&group.options())) {
      settings.push_back(sgd->momentum());
    }
  }
  return settings;
}

// Before recording: no parameter may still have the gradient accumulator of an eager step.
// One that something kept alive (a tensor computed from it, with its autograd graph) was made
// on the eager steps' stream, and the recorded backward would add to it there: CUDA refuses
// ("operation would make the legacy stream depend on a capturing blocking stream").
void check_no_eager_graph(const torch::nn::Module& model) {
  std::vector<std::string> held;
  for (const auto& item : model.named_parameters()) {
    if (torch::autograd::impl::try_get_grad_accumulator(item.value())) held.push_back(item.key());
  }
  if (held.empty()) return;
  const size_t shown = std::min<size_t>(held.size(), 3);
  throw core::UsageError(
      "cuda_graphs cannot record the step: " + std::to_string(held.size()) + " parameter" +
      (held.size() == 1 ? "" : "s") + " (" +
      core::join(std::vector<std::string>(held.begin(), held.begin() + shown)) +
      (held.size() > shown ? ", ..." : "") +
      ") still have the autograd graph of an earlier step: something holds a tensor computed "
      "from them (a forward's output or loss kept in a table, a global or a module's state "
      "without :detach()); keep it detached, or train without cuda_graphs");
}

}  // namespace

bool Trainer::optimizer_has_state() const {
  auto& optimizer = *spec_.optimizer;
  for (auto& group : optimizer.param_groups()) {
    const auto* sgd = dynamic_cast<const torch::optim::SGDOptions*>(&group.options());
    if (sgd && sgd->momentum() == 0) continue;  // SGD without momentum keeps none
    for (const auto& p : group.params()) {
      if (p.requires_grad() && !optimizer.state().count(optimizer_state_key(p))) return false;
    }
  }
  return true;
}

void Trainer::check_graphable() const {
  const auto& o = spec_.options;
  std::vector<std::string> why;
  if (!o.cuda_graphs_stand_in && !spec_.device.is_cuda()) {
    why.push_back("it needs a CUDA device (--device cuda), not " + spec_.device.str());
  }
  if (spec_.hooks.train_batch) why.push_back("a train_batch hook runs Lua in the step");
  if (lbfgs_) why.push_back("LBFGS evaluates the loss several times a step");
  if (o.accumulate > 1) why.push_back("accumulate > 1");
  if (o.clip_grad_norm > 0 || o.clip_grad_value > 0) {
    why.push_back("gradient clipping reads the gradients' norm on the host");
  }
  if (o.precision == Precision::kFloat16Master) {
    why.push_back("float16_master copies gradients to float32 masters outside the step");
  }
  if (o.on_nan != NanPolicy::kError) why.push_back("on_nan = 'skip' reads every loss first");
  if (parallel_) why.push_back("data-parallel training is not recorded yet");
  if (!dynamic_cast<FusedSGD*>(spec_.optimizer.get()) &&
      !dynamic_cast<Adadelta*>(spec_.optimizer.get())) {
    why.push_back(spec_.optimizer_name +
                  " is not one of the engine's multi-tensor optimizers a graph can record (SGD "
                  "and Adadelta; Adam and AdamW keep their step count on the host, so their bias "
                  "correction would be recorded as a constant)");
  }
  if (spec_.scheduler && spec_.scheduler->mode() == StepMode::kStep) {
    why.push_back("a per-step schedule changes the learning rate the graph holds every step");
  }
  if (!why.empty()) {
    throw core::UsageError("cuda_graphs cannot record this run's step: " + core::join(why, "; "));
  }
}

void Trainer::graph_work() {
  release_gradients(*spec_.optimizer);  // the recorded backward writes gradients of its own
  {
    AutocastScope autocast(spec_.options.precision, spec_.device);
    graph_output_ =
        forward_batch(spec_.model, graph_batch_, spec_.device, input_layout(spec_.options));
    graph_loss_ = (*spec_.loss)(graph_output_, graph_batch_.target);
  }
  AutocastScope no_autocast(Precision::kFloat32, spec_.device);  // backward outside autocast
  if (use_scaler_) {
    graph_scaled_step();
    return;
  }
  graph_loss_.backward();
  spec_.optimizer->step();
}

std::optional<BatchResult> Trainer::graphed_batch(const data::Batch& batch) {
  if (graph_ && group_lrs(*spec_.optimizer) != graph_lrs_) {  // a new rate: record again, now
    pull_scaler();  // the eager step that records it goes on from the device's scale
    graph_gradients_.clear();
    graph_output_ = graph_loss_ = torch::Tensor();
    graph_.reset();
    eager_since_graph_ = kGraphWarmupSteps - 1;
  }
  if (graph_ && !same_layout(batch, graph_batch_)) {
    return std::nullopt;  // other shapes (a last, smaller batch): this one eagerly
  }
  if (!graph_) {
    // recorded only once the optimizer has its state: a step that creates it (SGD's first
    // momentum step) would be replayed as a first step forever
    if (++eager_since_graph_ < kGraphWarmupSteps || !optimizer_has_state()) return std::nullopt;
    // record: this batch's own step runs eagerly on the graph's stream first
    graph_batch_ = batch;
    for (auto* t : {&graph_batch_.input, &graph_batch_.target, &graph_batch_.categorical}) {
      if (t->defined()) *t = t->clone();
    }
    for (auto& [name, tensor] : graph_batch_.inputs) tensor = tensor.clone();
    graph_ = std::make_unique<core::CudaGraph>(spec_.device, spec_.options.cuda_graphs_stand_in);
    release_gradients(*spec_.optimizer);  // an earlier graph's, when recording again
    BatchResult warm;
    graph_->capture(
        [&] {
          warm = eager_batch(batch);
          if (warm.output.defined()) warm.output = warm.output.detach();  // see backward()
          // what Lua still holds of the eager steps goes before the check
          if (spec_.model.collect_garbage) spec_.model.collect_garbage();
          check_no_eager_graph(*spec_.model.module);
        },
        [this] { graph_work(); });
    // the recorded autograd graph is not needed by the replays, and kept it would hold the
    // recorded accumulators for the eager steps that a new learning rate brings
    // (the CPU stand-in records nothing: its replays run the step again)
    for (auto* t : {&graph_output_, &graph_loss_}) {
      if (t->defined()) *t = t->detach();
    }
    auto* recorded = dynamic_cast<Adadelta*>(spec_.optimizer.get());
    if (recorded && !spec_.options.cuda_graphs_stand_in) recorded->count_recorded_step(-1);
    graph_lrs_ = group_lrs(*spec_.optimizer);
    graph_gradients_.clear();  // kept alive for the replays, whatever the eager steps release
    for (const auto& p : parameters_) graph_gradients_.push_back(p.grad());
    core::log::debug("cuda_graphs: the step is recorded at step {}", state_.step);
    return warm;
  }
  logged_.clear();
  batch_stepped_ = true;
  batch_nan_ = false;
  graph_batch_.input.copy_(batch.input, /*non_blocking=*/true);
  if (batch.target.defined()) graph_batch_.target.copy_(batch.target, true);
  if (batch.categorical.defined()) graph_batch_.categorical.copy_(batch.categorical, true);
  for (auto& [name, tensor] : graph_batch_.inputs) tensor.copy_(batch.inputs.at(name), true);
  push_scaler();
  graph_->replay();
  // what the step's bookkeeping does after an eager step, the gradients left where they are
  auto* adadelta = dynamic_cast<Adadelta*>(spec_.optimizer.get());
  if (adadelta && !spec_.options.cuda_graphs_stand_in) adadelta->count_recorded_step();
  micro_ = 0;
  ++state_.step;
  ++steps_here_;
  (*check_targets_)(*spec_.loss, graph_output_, graph_batch_.target, batch.target_range);
  // the graph writes its loss to the same memory every replay: a read later needs a copy
  batch_loss_tensor_ = graph_loss_.detach().clone();
  if (!deferred_) batch_loss_ = batch_loss_tensor_.to(torch::kFloat64).item<double>();
  BatchResult result;
  result.output = graph_output_;
  if (!deferred_) result.values["loss"] = batch_loss_;
  return result;
}

}  // namespace engine::train
