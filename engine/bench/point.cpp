#include "engine/bench/point.hpp"

#include <c10/core/InferenceMode.h>
#include <torch/optim/sgd.h>

#include "engine/core/errors.hpp"
#include "engine/core/memory.hpp"
#include "engine/data/pipeline.hpp"
#include "engine/data/synthetic.hpp"
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
  if (o.input_shape.empty()) throw core::UsageError("the model's input shape is not known");
  for (int64_t d : o.input_shape) positive(d, "every input dimension");
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

}  // namespace

Phase parse_phase(const std::string& name) {
  if (name == "training") return Phase::kTraining;
  if (name == "inference") return Phase::kInference;
  throw core::UsageError("--phase must be 'training' or 'inference', got '" + name + "'");
}

const char* phase_name(Phase phase) {
  return phase == Phase::kTraining ? "training" : "inference";
}

PointResult run_point(const nn::Model& model, const PointOptions& o, const Clock& clock) {
  check_options(o);
  model.module->to(o.device);
  torch::manual_seed(o.seed);
  data::Batch batch;
  batch.input = torch::randn(batch_shape(o)).to(o.device);
  batch.target = torch::randint(0, o.classes, {o.batch_size}, torch::kInt64).to(o.device);
  PointResult result;

  if (o.phase == Phase::kInference) {
    model.module->eval();
    c10::InferenceMode inference;
    train::AutocastScope autocast(o.precision, o.device);
    result.batch_ms = time_batches([&] { model.forward(batch.input); }, o.warmup_batches, o.batches,
                                   o.device, clock);
  } else {
    model.module->train();
    train::TrainSpec spec;
    spec.name = "bench";
    spec.seed = o.seed;
    spec.device = o.device;
    spec.model = model;
    bool log_probabilities = false;
    {
      torch::NoGradGuard no_grad;
      train::AutocastScope autocast(o.precision, o.device);
      log_probabilities = outputs_log_probabilities(model.forward(batch.input));
    }
    spec.loss = std::make_shared<nn::Loss>(log_probabilities ? nn::Loss::Kind::kNll
                                                             : nn::Loss::Kind::kCrossEntropy);
    result.loss = spec.loss->name();
    spec.optimizer = std::make_shared<train::FusedSGD>(
        model.module->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
    spec.optimizer_name = "SGD";
    // The trainer wants a training pipeline; the timed batches are the one made above.
    spec.train_data = data::Pipeline(std::make_shared<data::SyntheticSource>(
                                         o.input_shape, o.classes, o.batch_size, o.seed))
                          .batch(o.batch_size);
    spec.options.precision = o.precision;
    spec.options.checkpoint.folder.clear();
    train::Trainer trainer(spec, {});
    result.batch_ms = time_batches([&] { trainer.step_batch(batch); }, o.warmup_batches, o.batches,
                                   o.device, clock);
  }
  result.summary = summarize(result.batch_ms, o.batch_size);
  result.peak_resident_bytes = core::peak_resident_bytes();
  return result;
}

}  // namespace engine::bench
