// The training loop: epochs of batches, each a forward, loss, backward and (every `accumulate`
// batches) an optimizer step, or the script's train_batch hook; logging every N steps;
// validation every epoch or every N steps; schedules, early stopping, checkpoints, exact
// resume and Ctrl-C.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/core/cuda_graph.hpp"
#include "engine/core/timer.hpp"
#include "engine/data/batch.hpp"
#include "engine/train/master_weights.hpp"
#include "engine/train/metrics.hpp"
#include "engine/train/observer.hpp"
#include "engine/train/precision.hpp"
#include "engine/train/spec.hpp"
#include "engine/train/step_context.hpp"
#include "engine/train/target_check.hpp"
#include "engine/train/trainer_state.hpp"

namespace engine::distributed {
class Group;
}

namespace engine::train {

class DataParallel;

struct TrainResult {
  int64_t steps = 0;
  int64_t epochs = 0;
  double seconds = 0;
  std::map<std::string, double> last_train;  // the last epoch's averages
  std::map<std::string, double> last_validation;
  std::map<std::string, double> best_validation;  // each metric's best over the run
  std::string stop_reason;
  std::string last_checkpoint;
  std::string best_checkpoint;
};

class Trainer : public StepContext {
 public:
  // run_file: recorded in checkpoints, so that --resume finds the run to continue. group: the
  // processes of a data-parallel run (docs/distributed.md); the trainer then trains on this
  // rank's share of the data, averages gradients and metrics over the ranks, and only rank 0
  // writes checkpoints. Every rank gets the same checkpoint folder.
  Trainer(TrainSpec& spec, std::vector<Observer*> observers, std::string run_file = {},
          distributed::Group* group = nullptr);
  ~Trainer() override;
  // Restores a checkpoint of this script's run: the next run() goes on where it was written.
  // The run's checkpoints recorded in it are taken as the files beside checkpoint_path, wherever
  // the run's folder is now (a copied or moved run keeps to its own files).
  void resume_from(const std::string& checkpoint_path);
  // Whether run() has nothing left to do: the run's steps or epochs reached (a completed run
  // resumed without a longer --epochs or --steps), or early stopping already decided.
  bool finished() const;
  TrainResult run();
  // Runs the whole validation split once through an Evaluator; averages per sample.
  std::map<std::string, double> validate();
  const TrainerState& state() const { return state_; }
  // One batch through the training step alone (forward, loss, backward, and the optimizer
  // step that closes each accumulation group), without metrics, logging, validation or
  // checkpoints: what engine bench times as the training phase.
  void step_batch(const data::Batch& batch);
  // Called as each part of the built-in step ends (forward with the loss, backward, optimizer
  // step), so that engine bench can time them apart; not called for a train_batch hook or
  // LBFGS, whose parts interleave. Empty (the default): nothing is called.
  enum class StepPart { kForward, kBackward, kOptimizer };
  using StepPartEnd = std::function<void(StepPart)>;
  void on_step_part_end(StepPartEnd callback) { step_part_end_ = std::move(callback); }

  // StepContext
  TrainSpec& spec() override { return spec_; }
  bool backward(const torch::Tensor& loss) override;
  bool step() override;
  bool step(const std::string& optimizer) override;
  void log(const std::map<std::string, double>& values) override;
  void stop(const std::string& reason) override;
  int64_t epoch() const override { return state_.epoch + 1; }
  int64_t step_index() const override { return state_.step; }
  bool training() const override { return true; }

 private:
  void train_epoch();
  void run_batch(const data::Batch& batch);  // optimize_batch, then counters and metrics
  BatchResult optimize_batch(const data::Batch& batch);
  BatchResult eager_batch(const data::Batch& batch);
  // cuda_graphs: replays the graph for this batch, or records it (after an eager step on the
  // batch) once enough steps ran eagerly; an empty result means the batch runs eagerly.
  std::optional<BatchResult> graphed_batch(const data::Batch& batch);
  void graph_work();  // what the graph records: the built-in step on graph_batch_
  // The loss scaler (trainer_scaler.cpp). prepare_scaler: its device scalars, and whether eager
  // steps keep its state there (scales_on_device_). graph_scaled_step: the step recorded with
  // the scaler inside it; scaled_step_on_device: unscale, the step undone where a gradient
  // overflowed, the scale grown or backed off, all on the device.
  void prepare_scaler();
  // Whether this step scales with the device's state: scales_on_device_, once the optimizer
  // has its state (an undone step puts it back; the step that makes it cannot be undone)
  bool scaling_on_device();
  torch::Tensor scaled_loss(const torch::Tensor& loss);
  void graph_scaled_step();
  void scaled_step_on_device();
  void push_scaler();  // the host's scale and count to the device, before device steps
  void pull_scaler();  // the device's back to the host (a read), at log steps
  // The device scalars a read at a log step takes with the pending values (none when the host
  // holds the state), and what it read of them, in that order.
  std::vector<torch::Tensor> scaler_tensors() const;
  void take_scaler_values(const std::vector<double>& values);
  void check_graphable() const;
  bool optimizer_has_state() const;  // every parameter's, where the optimizer keeps any
  void optimizer_step();
  // Several optimizers (trainer_optimizers.cpp): what the run refuses with them, the batch's
  // step counted after a hook that stepped them by name, every optimizer's gradients released,
  // their epoch schedules, the watched metrics of their schedules, and their rates' columns.
  void check_several_optimizers() const;
  std::string optimizer_names() const;  // "discriminator, generator"
  void count_named_steps();
  void release_all_gradients();
  void step_epoch_schedulers();
  void observe_schedulers();
  void add_rates(std::map<std::string, double>& values) const;
  std::set<std::string> stepped_names_;  // the optimizers ctx:step(name) stepped this batch
  BatchResult lbfgs_batch(const data::Batch& batch);
  void after_step();
  void finish_inside_epoch(double loader_wait, double seconds, int64_t samples_here);
  MetricRow emit_data_row(double loader_wait, double seconds, int64_t samples_here);
  void end_epoch(double loader_wait, double epoch_seconds, int64_t epoch_samples_here);
  void run_validation();
  // After each validation (each epoch without validation data): ReduceLROnPlateau, keep_best
  // and early stopping look at their metrics.
  void watch_metrics();
  double watched_value(const MetricGoal& goal) const;  // throws when the metric is not logged
  void track(const MetricGoal& goal, BestTracker& tracker, bool* improved);
  void checkpoint();
  // Ctrl-C and SIGTERM; in a distributed run acted on together at sync points only (log steps,
  // epoch ends), where a stop one rank's script asked for is agreed on too.
  void check_interrupt(bool sync_point = true);
  // check_interrupt after a step, except the step that ends the epoch or the run: there the
  // interrupt waits for the epoch's end (its validation, its data row), which a run resumed
  // from that step would never reach, as its loop has no step left to take.
  void check_interrupt_between_steps(bool log_step);
  // Whether the coming backward ends an accumulation group (its gradients are all-reduced).
  bool synchronise_backward() const;
  // Reads the loss and acts on a non-finite one as on_nan says; false: the batch is skipped.
  bool check_loss(const torch::Tensor& loss);
  const data::Batch* batch_in_step_ = nullptr;  // the batch optimize_batch is on, for check_loss
  void emit(const MetricRow& row);
  void log_train_window();
  // Reads the pending batches' values in one copy into the window and epoch averages; a
  // non-finite loss among them ends the run as on_nan = 'error' does, naming its step.
  void settle();
  double elapsed() const { return elapsed_before_ + clock_.seconds(); }
  double fractional_epoch() const;

  TrainSpec& spec_;
  std::vector<Observer*> observers_;
  std::string run_file_;
  TrainerState state_;
  GradScaler scaler_;
  bool use_scaler_ = false;
  double batch_loss_ = 0;  // the value backward() read, so the built-in step reads it once
  // Deferred reads (TrainerOptions::deferred_reads): the loss backward() was given, and the
  // batches whose values are still on the device, read by settle().
  bool deferred_ = false;
  torch::Tensor batch_loss_tensor_;
  std::vector<PendingBatch> pending_;
  // cuda_graphs: the graph of the built-in step, the static batch it reads (each batch is
  // copied in), the output, loss and gradients it writes, the learning rates it was recorded
  // with, and the eager steps taken since there was none.
  std::unique_ptr<MasterWeights> master_;  // float16_master: the float32 copies stepped
  std::vector<torch::Tensor> stepped_;     // what the scaler and clipping see: parameters_,
                                           // or the masters in their place
  std::unique_ptr<core::CudaGraph> graph_;
  data::Batch graph_batch_;
  torch::Tensor graph_output_, graph_loss_;
  std::vector<torch::Tensor> graph_gradients_;
  std::vector<double> graph_lrs_;
  int64_t eager_since_graph_ = 0;
  // The loss scaler inside the graph: its scale and good-step count as device scalars, and the
  // steps it skipped since the host last read them (pull_scaler); whether the replays
  // since then left the host's GradScaler behind.
  torch::Tensor scale_on_device_, growth_on_device_, skipped_on_device_;
  bool scaler_on_device_ = false;
  bool scales_on_device_ = false;      // eager steps scale with the device's state too
  bool optimizer_state_made_ = false;  // scaling_on_device() found the optimizer's state
  bool lbfgs_ = false;
  int64_t batches_per_epoch_ = 0, steps_per_epoch_ = 0, total_steps_ = 0, epochs_ = 0;
  int64_t micro_ = 0;            // batches in the accumulation group so far
  bool batch_stepped_ = false;   // ctx:step() was called for the current batch
  bool batch_nan_ = false;       // the current batch's loss was not finite and was skipped
  bool checkpoint_due_ = false;  // the next checkpoint is the best one so far
  bool stop_ = false;
  std::string stop_reason_;
  std::string last_checkpoint_;
  std::map<std::string, double> logged_;  // ctx:log values of the current batch
  std::map<std::string, double> best_validation_;
  std::map<std::string, double> last_train_;  // the last finished epoch's training averages
  std::vector<torch::Tensor> parameters_;
  double elapsed_before_ = 0;  // seconds the run trained before this process (resume)
  core::Timer clock_;
  int64_t steps_here_ = 0;
  double window_start_ = 0;
  int64_t window_samples_ = 0;
  StepPartEnd step_part_end_;
  std::optional<TargetCheck> check_targets_;  // the training data's classes against the model
  std::unique_ptr<DataParallel> parallel_;    // set in a distributed run
  bool stop_requested_ = false;               // by this rank's script, in a distributed run
};

}  // namespace engine::train
