// One benchmark point: a model timed in the training phase (the trainer's own step: forward,
// loss, backward, SGD step) or the inference phase (forward under InferenceMode, the model in
// evaluation mode), or the loader alone (data_ingestion). With synthetic data (DLBS's
// semantics) one batch is made once and fed every time, so the figure is the step alone; with
// real data each timed batch includes reading it from the loader, as training does.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "engine/bench/data_feed.hpp"
#include "engine/bench/timing.hpp"
#include "engine/nn/model.hpp"
#include "engine/train/spec.hpp"

namespace engine::distributed {
class Group;
}

namespace engine::bench {

enum class Phase { kTraining, kInference, kDataIngestion };
// "training", "inference" or "data_ingestion"; anything else is a UsageError naming --phase.
Phase parse_phase(const std::string& name);
const char* phase_name(Phase phase);

// A point's options as run_point takes them. A point's parameters give them through
// bench::point_options (point_options.hpp), with the defaults of the one table
// (parameters.cpp); the initializers here are a plain struct's, for callers that set what they
// need.
struct PointOptions {
  std::vector<int64_t> input_shape;  // one sample, e.g. {1, 28, 28}
  // Models of several inputs (or of inputs that are not images or feature vectors): a batch of
  // `batch_size` inputs made by the model itself (its example_input), used instead of
  // input_shape's random batch.
  std::function<data::Batch(int64_t batch_size)> example_batch;
  int64_t classes = 10;
  int64_t batch_size = 32;
  int64_t warmup_batches = 2;
  int64_t batches = 10;
  Phase phase = Phase::kTraining;
  torch::Device device = torch::kCPU;
  train::Precision precision = train::Precision::kFloat32;  // bfloat16: autocast, as training
  uint64_t seed = 1;
  DataOptions data;
  std::string profile_path;  // non-empty: a Chrome trace of the timed batches is written there
  // training: the step recorded as a CUDA graph and replayed (TrainerOptions::cuda_graphs);
  // the warm-up batches include the eager steps before the recording
  bool cuda_graphs = false;
  // the model's convolution weights and the batches laid out channels last (torch.channels_last)
  bool channels_last = false;
  // > 0: the fraction of the device's memory libtorch's caching allocator may take (CUDA)
  double device_memory_fraction = 0;
  // A data-parallel point: every rank runs it with batch_size samples, and training averages
  // the gradients over the group (the trainer's DataParallel: c10d's Reducer), as DLBS's
  // replicas. Inference and data_ingestion run independently on every rank.
  distributed::Group* group = nullptr;
};

struct PointResult {
  std::vector<double> batch_ms;  // every timed batch
  // Each part of each batch, where the phase has parts: training's forward (with the loss),
  // backward and optimizer, and data when the batches come from a loader; inference's data and
  // forward with a loader. Timed within the timed batches on CPU, in as many batches again
  // after them on CUDA.
  std::map<std::string, std::vector<double>> part_ms;
  Summary summary;
  // The mean milliseconds of a batch in as many batches again with no synchronisation between
  // them (time_pipelined), after the timed ones: what a loop that keeps the device's queue full
  // gets. On the CPU, where a batch's work is done when it returns, the timed batches' mean.
  double pipelined_ms = std::numeric_limits<double>::quiet_NaN();
  // The process's CPU time (every thread's) and the wall time over the timed batches: how much
  // of its threads' time the point got (another program's load leaves it less)
  double cpu_seconds = 0, wall_seconds = 0;
  std::string loss;  // the loss the training phase used (NLLLoss or CrossEntropyLoss)
  int64_t peak_resident_bytes = 0;
  // CUDA memory allocated, and held by the caching allocator, at their peaks over the timed
  // batches (counted from the end of the warm-up); 0 on CPU
  int64_t peak_device_bytes = 0;
  int64_t peak_device_reserved_bytes = 0;
};

// Checks the options (positive sizes and counts; a UsageError names the flag) and times the
// point. The model moves to the device. Training uses SGD (lr 0.01, momentum 0.9), as the
// references in ../shared/bench do, and NLLLoss when the model's outputs are log-probabilities
// (they exponentiate to rows summing to 1), CrossEntropyLoss otherwise.
// The model may be empty (no module) for the data_ingestion phase.
PointResult run_point(const nn::Model& model, const PointOptions& options,
                      const Clock& clock = steady_seconds);

// The training step of a training script's own run (engine bench SCRIPT.lua): the spec its
// model(hp), loss, optimizer and data built, stepped by the trainer as engine train steps it.
// The batch is the first of the script's training data, made once and fed every time (as
// DLBS's synthetic data), or, with options.data.real, each timed batch read through the
// script's pipeline. options gives the batches, warm-up, seed and profile; its batch_size is
// set from the script's batch. No checkpoint is written and no validation runs.
PointResult run_script_step(train::TrainSpec spec, PointOptions& options,
                            const Clock& clock = steady_seconds);

}  // namespace engine::bench
