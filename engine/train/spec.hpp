// Everything a training run is made of, as read from a script: plain C++ values, no Lua.
#pragma once

#include <torch/optim/optimizer.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/data/batch.hpp"
#include "engine/data/pipeline.hpp"
#include "engine/io/hdf5.hpp"
#include "engine/io/hparam.hpp"
#include "engine/nn/loss.hpp"
#include "engine/nn/model.hpp"
#include "engine/train/metrics.hpp"
#include "engine/train/scheduler.hpp"

namespace engine::train {

// kFloat16Master: DLBS's float16, a float16 model with float32 master weights
// (train/master_weights.hpp); engine bench's --dtype float16_master only.
enum class Precision { kFloat32, kBFloat16, kFloat16, kFloat16Master };
Precision parse_precision(const std::string& name);
std::string precision_name(Precision precision);

// What to do with a NaN or infinite loss: stop the run (default) or leave the batch out.
enum class NanPolicy { kError, kSkip };

// A metric to watch, "validation.loss" or "train.accuracy", and which way is better.
struct MetricGoal {
  std::string split = "validation";
  std::string name = "loss";
  bool maximize = false;
  std::string text() const { return split + "." + name; }
  bool better(double candidate, double best, double min_delta = 0) const;
};
// "validation.accuracy" (the split defaults to validation); mode "min", "max", or "" to infer
// from the name (accuracy, top-k, precision, recall, F1 are maximised, the rest minimised).
MetricGoal parse_goal(const std::string& metric, const std::string& mode = "");

struct EarlyStopping {
  MetricGoal goal;
  int64_t patience = 3;  // validations without an improvement of at least min_delta
  double min_delta = 0;
};

// Dynamic loss scaling, with torch.cuda.amp.GradScaler's arguments. On by default with float16
// only; it can be turned on for any precision (the arithmetic is exact for powers of two).
struct LossScaling {
  std::optional<bool> enabled;  // unset: on for float16, off otherwise
  double init_scale = 65536.0;
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int64_t growth_interval = 2000;  // good steps in a row before the scale grows
  bool active(Precision precision) const {
    return enabled.value_or(precision == Precision::kFloat16 ||
                            precision == Precision::kFloat16Master);
  }
};

struct CheckpointPolicy {
  bool every_epoch = true;
  int64_t every_steps = 0;              // 0: not by steps
  int64_t keep_last = 2;                // most recent checkpoints kept; older ones are deleted
  std::optional<MetricGoal> keep_best;  // also keep the best one by this metric
  std::string folder;                   // where ckpt-<step>.h5 go; empty: no checkpoints
};

struct TrainerOptions {
  int64_t epochs = 1;                // used when steps is 0
  int64_t steps = 0;                 // total optimizer steps; 0: run `epochs` full epochs
  int64_t validate_every_steps = 0;  // 0: validate at the end of every epoch
  int64_t log_every = 50;            // steps between logged training-metric rows
  int64_t accumulate = 1;            // batches whose gradients add up to one optimizer step
  double clip_grad_norm = 0;         // 0: no clipping by norm
  double clip_norm_type = 2;
  double clip_grad_value = 0;  // 0: no clipping by value
  Precision precision = Precision::kFloat32;
  LossScaling loss_scale;
  NanPolicy on_nan = NanPolicy::kError;
  std::optional<EarlyStopping> early_stopping;
  CheckpointPolicy checkpoint;
  bool sync_batchnorm = false;  // data-parallel: every BatchNorm uses the world's statistics
  // Whether the built-in step's loss and metrics stay on the device until a log step, a
  // checkpoint or the epoch's end reads them all in one copy (no host synchronisation between
  // log steps). Unset: on CUDA, where on_nan = 'error' and no train_batch hook or LBFGS reads
  // the loss itself; the CPU reads each step's values as it goes (cheap there). The series are
  // the same either way; a non-finite loss is then found at the next read (docs/gpu.md).
  std::optional<bool> deferred_reads;
  // The built-in step (forward, loss, backward, optimizer) recorded as one CUDA graph after
  // warm-up steps and replayed for every batch of the same shapes (docs/gpu.md, "CUDA
  // graphs"); a batch of other shapes (an epoch's last, smaller one) runs eagerly, and a change
  // of learning rate records it again.
  bool cuda_graphs = false;
  // memory_format = 'channels_last': convolution weights and image batches laid out N x H x W x
  // C (PyTorch's torch.channels_last), which cuDNN's tensor-core kernels prefer.
  bool channels_last = false;
  // Tests only: cuda_graphs on the CPU through core::CudaGraph's stand-in (each replay runs the
  // step again), to check the bookkeeping around the graph without a GPU.
  bool cuda_graphs_stand_in = false;
};

class StepContext;

// What a train_batch / evaluate_batch hook hands back: named values averaged over the batch
// ("loss" among them), and optionally the output, for the built-in metrics.
struct BatchResult {
  std::map<std::string, double> values;
  torch::Tensor output;
};

// Script-defined parts of the loop (Determined's train_batch / evaluate_batch, and callbacks).
// Unset ones fall back to the built-in behaviour.
struct Hooks {
  std::function<BatchResult(StepContext&, const data::Batch&)> train_batch;
  std::function<BatchResult(StepContext&, const data::Batch&)> evaluate_batch;
  std::function<void(StepContext&)> on_epoch_start;
  std::function<void(StepContext&, const std::map<std::string, double>&)> on_epoch_end;
  std::function<void(StepContext&, const std::map<std::string, double>&)> on_validation_end;
  std::function<void(StepContext&, const std::string& path)> on_checkpoint;
};

// A random generator outside libtorch whose state checkpoints keep (the script's math.random).
struct ExtraGenerator {
  std::string name;  // its dataset under /trainer/rng
  std::function<torch::Tensor()> state;
  std::function<void(const torch::Tensor&)> set_state;
};

// One of several optimizers a script names (a GAN's generator and discriminator, Lightning's
// manual optimization), with its own scheduler: a train_batch hook steps it by name
// (ctx:step('generator')), and checkpoints keep each.
struct NamedOptimizer {
  std::string name;
  std::shared_ptr<torch::optim::Optimizer> optimizer;
  std::string type;                      // "Adam": checked against a checkpoint's
  std::shared_ptr<Scheduler> scheduler;  // may be null
};

// What a script carries from batch to batch (ctx.state: an RNN's hidden state, EMA weights,
// fixed noise, counters), written into each checkpoint's group /script_state and read back on
// resume. Unset functions: the script keeps no state.
struct ScriptState {
  std::function<void(hid_t group)> save;
  std::function<void(hid_t group)> restore;
};

struct TrainSpec {
  std::string name;
  std::string description;  // the script's: in the run file and engine report
  uint64_t seed = 0;
  std::map<std::string, io::HParam> hparams;  // after overrides; saved in checkpoints
  torch::Device device = torch::kCPU;
  nn::Model model;
  std::optional<data::Pipeline> train_data;
  std::optional<data::Pipeline> validation_data;
  // held out: never read by training or validation, only by engine eval --split test
  std::optional<data::Pipeline> test_data;
  // the script's `classes`: the model's class names in class order (engine predict's labels
  // where the data's source has none); empty when the script gives none
  std::vector<std::string> class_names;
  std::shared_ptr<nn::Loss> loss;
  std::shared_ptr<torch::optim::Optimizer> optimizer;
  std::string optimizer_name;
  std::shared_ptr<Scheduler> scheduler;  // may be null
  // Several optimizers, by name (sorted), when the script names them: `optimizer` is then the
  // first of them (its rate is the run's `lr` column), and `scheduler` null (each has its own).
  std::vector<NamedOptimizer> optimizers;
  std::vector<std::string> metrics;  // besides loss: "accuracy", "top5"...
  std::vector<CustomMetric> custom_metrics;
  TrainerOptions options;
  Hooks hooks;
  std::vector<ExtraGenerator> generators;
  ScriptState script_state;
};

}  // namespace engine::train
