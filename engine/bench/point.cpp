#include "engine/bench/point.hpp"

#include <torch/optim/sgd.h>

#include <memory>

#include "engine/bench/trace_recorder.hpp"
#include "engine/core/device_memory.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/memory.hpp"
#include "engine/data/pipeline.hpp"
#include "engine/data/synthetic.hpp"
#include "engine/distributed/group.hpp"
#include "engine/train/batch_forward.hpp"
#include "engine/train/evaluator.hpp"
#include "engine/train/master_weights.hpp"
#include "engine/train/precision.hpp"
#include "engine/train/sgd.hpp"
#include "engine/train/trainer.hpp"

namespace engine::bench {
namespace {

void check_options(const PointOptions& o) {
  auto positive = [](int64_t v, const char* flag) {
    if (v <= 0)
      throw core::UsageError(std::string(flag) + " must be positive, got " + std::to_string(v));
  };
  positive(o.batch_size, "--batch_size");
  positive(o.batches, "--num_batches");
  positive(o.classes, "the number of classes");
  if (o.warmup_batches < 0) {
    throw core::UsageError("--num_warmup_batches must be 0 or more, got " +
                           std::to_string(o.warmup_batches));
  }
  if (o.input_shape.empty() && !o.example_batch) {
    throw core::UsageError("the model's input shape is not known");
  }
  for (int64_t d : o.input_shape) positive(d, "every input dimension");
  if (o.example_batch && o.data.real && o.phase != Phase::kDataIngestion) {
    throw core::UsageError(
        "--data real reads one input per sample; this model's batches (its example_input) are "
        "timed with --data synthetic");
  }
  train::check_precision(o.precision, o.device);
}

// Whether the model's outputs look like log-probabilities (each row exponentiates to a sum of
// one), as those of mlp and mnist_cnn (LogSoftmax) do; then NLLLoss, else CrossEntropyLoss.
bool outputs_log_probabilities(const torch::Tensor& output) {
  if (output.dim() != 2) return false;
  const auto sums = output.detach().to(torch::kFloat64).exp().sum(1);
  return torch::allclose(sums, torch::ones_like(sums), 1e-3, 1e-3);
}

std::vector<int64_t> batch_shape(const PointOptions& o) {
  std::vector<int64_t> shape{o.batch_size};
  shape.insert(shape.end(), o.input_shape.begin(), o.input_shape.end());
  return shape;
}

const char* step_part_name(train::Trainer::StepPart part) {
  switch (part) {
    case train::Trainer::StepPart::kForward:
      return "forward";
    case train::Trainer::StepPart::kBackward:
      return "backward";
    case train::Trainer::StepPart::kOptimizer:
      return "optimizer";
  }
  return "forward";
}

}  // namespace

Phase parse_phase(const std::string& name) {
  if (name == "training") return Phase::kTraining;
  if (name == "inference") return Phase::kInference;
  if (name == "data_ingestion") return Phase::kDataIngestion;
  throw core::UsageError("--phase must be training, inference or data_ingestion, got '" + name +
                         "'");
}

const char* phase_name(Phase phase) {
  switch (phase) {
    case Phase::kTraining:
      return "training";
    case Phase::kInference:
      return "inference";
    case Phase::kDataIngestion:
      return "data_ingestion";
  }
  return "training";
}

PointResult run_point(const nn::Model& model, const PointOptions& o, const Clock& clock) {
  check_options(o);
  if (o.device_memory_fraction > 0) core::limit_device_memory(o.device, o.device_memory_fraction);
  torch::manual_seed(o.seed);
  PointResult result;
  // The parts of a batch are timed within the timed batches on CPU, where a clock reading
  // costs tens of nanoseconds and there is nothing to wait for. On CUDA each reading needs the
  // device synchronised, which would stall its queue between the parts and change the step's
  // time: there they are timed in as many batches again, after the timed ones.
  PartTimer parts(o.device, clock);
  const bool parts_inline = !o.device.is_cuda();
  bool split = false;  // whether this phase's batches have parts
  // The profiler records the timed batches only (warm-up batches are run before it starts).
  std::unique_ptr<TraceRecorder> profile;
  auto time = [&](const std::function<void()>& batch) {
    for (int64_t i = 0; i < o.warmup_batches; ++i) batch();
    // the peaks of the timed batches: the warm-up's one-off buffers are not the step's
    core::reset_peak_device_bytes(o.device);
    if (!o.profile_path.empty())
      profile = std::make_unique<TraceRecorder>(o.profile_path, o.device);
    parts.enable(split && parts_inline);
    result.batch_ms = time_batches(batch, 0, o.batches, o.device, clock);
    profile.reset();  // writes the trace
    if (split && !parts_inline) {
      parts.enable(true);
      for (int64_t i = 0; i < o.batches; ++i) batch();
    }
    parts.enable(false);
    result.part_ms = parts.ms();
  };
  auto finish = [&] {
    result.summary = summarize(result.batch_ms, o.batch_size);
    result.peak_resident_bytes = core::peak_resident_bytes();
    result.peak_device_bytes = core::peak_device_bytes(o.device);
    result.peak_device_reserved_bytes = core::peak_device_reserved_bytes(o.device);
    return result;
  };
  std::unique_ptr<Feed> feed;
  if (o.phase == Phase::kDataIngestion || o.data.real) {
    feed = std::make_unique<Feed>(
        point_pipeline(o.data, o.input_shape, o.classes, o.batch_size, o.seed), o.seed);
  }
  if (o.phase == Phase::kDataIngestion) {
    time([&] { feed->next(); });
    return finish();
  }
  // The next batch: the feed's (its reading timed as the data part) or one made once.
  data::Batch batch;
  auto next_batch = [&]() -> const data::Batch& {
    parts.start();
    if (!feed) return batch;
    batch = feed->next();
    parts.end("data");
    return batch;
  };

  model.module->to(o.device);
  if (o.example_batch) {
    batch = o.example_batch(o.batch_size);
    batch.move_to(o.device);
  } else {
    batch.input = torch::randn(batch_shape(o)).to(o.device);
  }
  batch.target = torch::randint(0, o.classes, {o.batch_size}, torch::kInt64).to(o.device);

  train::TrainSpec spec;
  spec.name = "bench";
  spec.seed = o.seed;
  spec.device = o.device;
  spec.model = model;
  spec.options.precision = o.precision;
  spec.options.channels_last = o.channels_last;
  if (o.channels_last) train::to_channels_last(*model.module);
  if (o.phase == Phase::kInference) {
    if (o.precision == train::Precision::kFloat16Master) {
      train::check_precision(o.precision, o.device);
      train::to_low_precision(*model.module, torch::kHalf);  // no optimizer: no masters
    }
    // no loss in the spec: the evaluator's batch is the forward pass alone
    train::Evaluator evaluator(spec);
    train::Evaluator::Mode inference(spec);
    split = feed != nullptr;  // without a loader the forward pass is the whole batch
    time([&] {
      evaluator.evaluate_batch(next_batch());
      parts.end("forward");
    });
    return finish();
  }

  model.module->train();
  bool log_probabilities = false;
  {
    torch::NoGradGuard no_grad;
    train::AutocastScope autocast(o.precision, o.device);
    // the model is still float32 here (the trainer makes float16_master's float16 model)
    auto layout = train::input_layout(spec.options);
    layout.half = false;
    log_probabilities =
        outputs_log_probabilities(train::forward_batch(model, batch, o.device, layout));
  }
  spec.loss = std::make_shared<nn::Loss>(log_probabilities ? nn::Loss::Kind::kNll
                                                           : nn::Loss::Kind::kCrossEntropy);
  result.loss = spec.loss->name();
  spec.optimizer = std::make_shared<train::FusedSGD>(model.module->parameters(),
                                                     torch::optim::SGDOptions(0.01).momentum(0.9));
  spec.optimizer_name = "SGD";
  // The trainer wants a training pipeline; the timed batches are the one made above, or the
  // feed's.
  // (in a data-parallel point the world's batch, of which each rank takes batch_size)
  const int64_t world = o.group ? o.group->size() : 1;
  const auto sample_shape =
      o.input_shape.empty() ? batch.input.sizes().slice(1).vec() : o.input_shape;
  spec.train_data = data::Pipeline(std::make_shared<data::SyntheticSource>(
                                       sample_shape, o.classes, o.batch_size * world, o.seed))
                        .batch(o.batch_size * world);
  spec.options.checkpoint.folder.clear();
  spec.options.cuda_graphs = o.cuda_graphs;
  train::Trainer trainer(spec, {}, {}, o.group);
  trainer.on_step_part_end([&](train::Trainer::StepPart part) { parts.end(step_part_name(part)); });
  split = !o.cuda_graphs;  // a replayed graph is one launch: its parts cannot be told apart
  time([&] { trainer.step_batch(next_batch()); });
  return finish();
}

}  // namespace engine::bench
