#include "engine/bench/point.hpp"

#include <torch/optim/sgd.h>

#include <memory>

#include "engine/bench/trace_recorder.hpp"
#include "engine/core/device_memory.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"
#include "engine/core/memory.hpp"
#include "engine/core/numbers.hpp"
#include "engine/core/resource_monitor.hpp"
#include "engine/data/loader.hpp"
#include "engine/data/pipeline.hpp"
#include "engine/data/synthetic.hpp"
#include "engine/distributed/group.hpp"
#include "engine/nn/parameter_slots.hpp"
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
  if (o.batches > core::kMaxCount || o.warmup_batches > core::kMaxCount) {
    throw core::UsageError("--num_batches and --num_warmup_batches must be at most 2^53 (" +
                           std::to_string(core::kMaxCount) + "), the most a run counts");
  }
  // a batch's values: a product that must not wrap around (libtorch would call it a bug)
  std::optional<int64_t> values = o.batch_size;
  for (int64_t d : o.input_shape) values = values ? core::count_product(*values, d) : values;
  if (!values) {
    throw core::UsageError("--batch_size " + std::to_string(o.batch_size) + ": a batch of " +
                           std::to_string(o.batch_size) + " samples of shape " +
                           core::shape_string(o.input_shape) +
                           " is more values than a tensor can hold");
  }
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

namespace {

// One point's measurement: the batches timed (warm-up first), their parts, the peaks.
class PointRun {
 public:
  PointRun(const PointOptions& o, const Clock& clock)
      : o_(o), clock_(clock), parts_(o.device, clock), parts_inline_(!o.device.is_cuda()) {
    if (o.phase == Phase::kDataIngestion || o.data.real) {
      feed_ = std::make_unique<Feed>(
          point_pipeline(o.data, o.input_shape, o.classes, o.batch_size, o.seed), o.seed);
    }
  }

  PointResult data_ingestion() {
    time([&] { feed_->next(); });
    return finish();
  }

  PointResult inference(const nn::Model& model) {
    auto spec = base_spec(model);
    if (o_.precision == train::Precision::kFloat16Master) {
      train::check_precision(o_.precision, o_.device);
      train::to_low_precision(*model.module, torch::kHalf);  // no optimizer: no masters
    }
    // no loss in the spec: the evaluator's batch is the forward pass alone
    train::Evaluator evaluator(spec);
    train::Evaluator::Mode inference(spec);
    // without a loader (or a copy from host memory) the forward pass is the whole batch
    split_ = feed_ != nullptr || copy_each_batch_;
    time([&] {
      evaluator.evaluate_batch(next_batch());
      parts_.end("forward");
    });
    return finish();
  }

  PointResult script_training(train::TrainSpec& spec) {
    spec.options.checkpoint.folder.clear();
    spec.model.module->train();
    result_.loss = spec.loss ? spec.loss->name() : std::string();
    train::Trainer trainer(spec, {}, {}, nullptr);
    trainer.on_step_part_end(
        [&](train::Trainer::StepPart part) { parts_.end(step_part_name(part)); });
    split_ = !spec.options.cuda_graphs;
    time([&] { trainer.step_batch(next_batch()); });
    return finish();
  }

  // The script's first training batch, kept for every step, or its pipeline as the feed.
  void take_script_data(const data::Pipeline& train_data, bool real) {
    if (real) {
      feed_ = std::make_unique<Feed>(train_data, o_.seed);
      batch_ = feed_->next();
    } else {
      data::EpochReader reader(train_data, o_.seed, 0);
      auto first = reader.next();
      if (!first) throw core::DataError("the script's training data yields no batch");
      batch_ = std::move(*first);
      batch_.move_to(o_.device);
    }
  }

  std::vector<int64_t> sample_shape() const {
    return batch_.input.defined() ? batch_.input.sizes().slice(1).vec() : std::vector<int64_t>{};
  }

  int64_t batch_rows() const {
    return batch_.target.defined() && batch_.target.dim() > 0 ? batch_.target.size(0)
                                                              : batch_.input.size(0);
  }

  PointResult training(const nn::Model& model) {
    auto spec = base_spec(model);
    model.module->train();
    spec.loss = std::make_shared<nn::Loss>(outputs_log_probabilities_of(model, spec)
                                               ? nn::Loss::Kind::kNll
                                               : nn::Loss::Kind::kCrossEntropy);
    result_.loss = spec.loss->name();
    spec.optimizer = std::make_shared<train::FusedSGD>(
        nn::unique_parameters(*model.module), torch::optim::SGDOptions(0.01).momentum(0.9));
    spec.optimizer_name = "SGD";
    // The trainer wants a training pipeline; the timed batches are the one made here, or the
    // feed's (in a data-parallel point the world's batch, of which each rank takes batch_size).
    const int64_t world = o_.group ? o_.group->size() : 1;
    const auto sample_shape =
        o_.input_shape.empty() ? batch_.input.sizes().slice(1).vec() : o_.input_shape;
    spec.train_data = data::Pipeline(std::make_shared<data::SyntheticSource>(
                                         sample_shape, o_.classes, o_.batch_size * world, o_.seed))
                          .batch(o_.batch_size * world);
    spec.options.checkpoint.folder.clear();
    spec.options.cuda_graphs = o_.cuda_graphs;
    train::Trainer trainer(spec, {}, {}, o_.group);
    trainer.on_step_part_end(
        [&](train::Trainer::StepPart part) { parts_.end(step_part_name(part)); });
    split_ = !o_.cuda_graphs;  // a replayed graph is one launch: its parts cannot be told apart
    time([&] { trainer.step_batch(next_batch()); });
    return finish();
  }

 private:
  // The model on the device, the batch made once (the feed's replace it batch by batch), and
  // the spec the phases share.
  train::TrainSpec base_spec(const nn::Model& model) {
    model.module->to(o_.device);
    if (o_.example_batch) {
      batch_ = o_.example_batch(o_.batch_size);
      batch_.move_to(o_.device);
    } else {
      batch_.input = torch::randn(batch_shape(o_)).to(o_.device);
    }
    batch_.target = torch::randint(0, o_.classes, {o_.batch_size}, torch::kInt64).to(o_.device);
    if (o_.data.place != SyntheticPlace::kDevice && o_.device.is_cuda() && !feed_) {
      // DLBS's synthetic/pinned and /pageable: the batch in host memory, copied every time
      const bool pinned = o_.data.place == SyntheticPlace::kPinned;
      host_batch_.input = pinned ? batch_.input.cpu().pin_memory() : batch_.input.cpu();
      host_batch_.target = pinned ? batch_.target.cpu().pin_memory() : batch_.target.cpu();
      copy_each_batch_ = true;
    }
    train::TrainSpec spec;
    spec.name = "bench";
    spec.seed = o_.seed;
    spec.device = o_.device;
    spec.model = model;
    spec.options.precision = o_.precision;
    spec.options.channels_last = o_.channels_last;
    if (o_.channels_last) train::to_channels_last(*model.module);
    return spec;
  }

  // Whether the model ends in log-probabilities (a LogSoftmax): NLL then, else cross-entropy.
  bool outputs_log_probabilities_of(const nn::Model& model, const train::TrainSpec& spec) {
    torch::NoGradGuard no_grad;
    train::AutocastScope autocast(o_.precision, o_.device);
    // the model is still float32 here (the trainer makes float16_master's float16 model)
    auto layout = train::input_layout(spec.options);
    layout.half = false;
    return outputs_log_probabilities(train::forward_batch(model, batch_, o_.device, layout));
  }

  // The next batch: the feed's (its reading timed as the data part) or the one made once.
  const data::Batch& next_batch() {
    parts_.start();
    if (copy_each_batch_) {
      const bool pinned = o_.data.place == SyntheticPlace::kPinned;
      batch_.input = host_batch_.input.to(o_.device, /*non_blocking=*/pinned);
      batch_.target = host_batch_.target.to(o_.device, /*non_blocking=*/pinned);
      parts_.end("data");
      return batch_;
    }
    if (!feed_) return batch_;
    batch_ = feed_->next();
    parts_.end("data");
    return batch_;
  }

  // The parts of a batch are timed within the timed batches on CPU, where a clock reading
  // costs tens of nanoseconds and there is nothing to wait for. On CUDA each reading needs the
  // device synchronised, which would stall its queue between the parts and change the step's
  // time: there they are timed in as many batches again, after the timed ones. The profiler
  // records the timed batches only (warm-up batches are run before it starts).
  void time(const std::function<void()>& batch) {
    for (int64_t i = 0; i < o_.warmup_batches; ++i) batch();
    // the peaks of the timed batches: the warm-up's one-off buffers are not the step's
    core::reset_peak_device_bytes(o_.device);
    std::unique_ptr<TraceRecorder> profile;
    if (!o_.profile_path.empty()) {
      profile = std::make_unique<TraceRecorder>(o_.profile_path, o_.device);
    }
    parts_.enable(split_ && parts_inline_);
    const double cpu_before = core::process_cpu_seconds(), wall_before = steady_seconds();
    result_.batch_ms = time_batches(batch, 0, o_.batches, o_.device, clock_);
    result_.cpu_seconds = core::process_cpu_seconds() - cpu_before;
    result_.wall_seconds = steady_seconds() - wall_before;
    profile.reset();  // writes the trace
    if (split_ && !parts_inline_) {
      parts_.enable(true);
      for (int64_t i = 0; i < o_.batches; ++i) batch();
    }
    parts_.enable(false);
    result_.part_ms = parts_.ms();
    // on an accelerator, as many batches again without a wait between them
    if (!o_.device.is_cpu()) {
      result_.pipelined_ms = time_pipelined(batch, o_.batches, o_.device, clock_);
    }
  }

  PointResult finish() {
    result_.summary = summarize(result_.batch_ms, o_.batch_size);
    if (std::isnan(result_.pipelined_ms)) result_.pipelined_ms = result_.summary.mean_ms;
    result_.peak_resident_bytes = core::peak_resident_bytes();
    result_.peak_device_bytes = core::peak_device_bytes(o_.device);
    result_.peak_device_reserved_bytes = core::peak_device_reserved_bytes(o_.device);
    return result_;
  }

  const PointOptions& o_;
  const Clock& clock_;
  PointResult result_;
  PartTimer parts_;
  const bool parts_inline_;
  bool split_ = false;  // whether this phase's batches have parts
  std::unique_ptr<Feed> feed_;
  data::Batch batch_;
  data::Batch host_batch_;        // synthetic/pinned and /pageable on a GPU: the batch's home
  bool copy_each_batch_ = false;  // then each batch is copied from it
};

}  // namespace

PointResult run_script_step(train::TrainSpec spec, PointOptions& o, const Clock& clock) {
  if (o.batches <= 0 || o.warmup_batches < 0) {
    throw core::UsageError("--num_batches must be 1 or more and --num_warmup_batches 0 or more");
  }
  o.device = spec.device;
  o.precision = spec.options.precision;
  o.cuda_graphs = spec.options.cuda_graphs;
  torch::manual_seed(o.seed);
  const bool real = o.data.real;
  o.data.real = false;  // the feed is the script's pipeline, not a --data_backend's
  o.phase = Phase::kTraining;
  PointRun run(o, clock);
  o.data.real = real;
  if (!spec.train_data) throw core::UsageError("the script's data() gives no train pipeline");
  run.take_script_data(*spec.train_data, real);
  o.batch_size = run.batch_rows();
  o.input_shape = run.sample_shape();
  return run.script_training(spec);
}

PointResult run_point(const nn::Model& model, const PointOptions& o, const Clock& clock) {
  check_options(o);
  if (o.device_memory_fraction > 0) core::limit_device_memory(o.device, o.device_memory_fraction);
  torch::manual_seed(o.seed);
  PointRun run(o, clock);
  if (o.phase == Phase::kDataIngestion) return run.data_ingestion();
  if (o.phase == Phase::kInference) return run.inference(model);
  return run.training(model);
}

}  // namespace engine::bench
