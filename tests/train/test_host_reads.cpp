// What the training step reads back from the device. Each read (an item(), a copy to the host)
// waits for the device's whole queue on a GPU; with deferred reads (a GPU's default) a step
// makes none, and a log step one copy for all of its values. Counted on the CPU through
// libtorch's operator callbacks: item() is aten::_local_scalar_dense, x.cpu() is aten::to with
// a CPU device.
#include <doctest/doctest.h>

#include <ATen/record_function.h>

#include <cmath>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/train/checkpoint.hpp"
#include "engine/train/sgd.hpp"
#include "engine/train/trainer.hpp"
#include "tests/test_support.hpp"
#include "tests/train/blob_spec.hpp"

using namespace engine;

namespace {

thread_local int64_t items_read = 0;   // item(), and what calls it (bool of a tensor...)
thread_local int64_t copies_read = 0;  // x.cpu()

std::unique_ptr<at::ObserverContext> count_read(const at::RecordFunction& fn) {
  const std::string name = fn.name();
  if (name == "aten::_local_scalar_dense") {
    ++items_read;
  } else if (name == "aten::to") {
    const auto op = fn.operator_name();
    const auto inputs = fn.inputs();
    // to(self, dtype, layout, device, ...) to the CPU with the tensor's own dtype: Tensor::cpu()
    // (autocast's casts change the dtype; a move to a device, x.to(device), gives none)
    if (op && op->overload_name == "dtype_layout" && inputs.size() > 3 && inputs[0].isTensor() &&
        inputs[1].isInt() &&
        inputs[1].toInt() == static_cast<int64_t>(inputs[0].toTensor().scalar_type()) &&
        inputs[3].isDevice() && inputs[3].toDevice().is_cpu()) {
      ++copies_read;
    }
  }
  return nullptr;
}

// The reads made between one step's progress report and the next's: a step's own, and those of
// the log step before it (its row is written after its progress report).
struct ReadsPerStep : train::Observer {
  std::vector<std::pair<int64_t, int64_t>> steps;  // (items, copies), step 1 first
  int64_t items_before = 0, copies_before = 0;
  void on_progress(const train::Progress&) override {
    steps.emplace_back(items_read - items_before, copies_read - copies_before);
    items_before = items_read;
    copies_before = copies_read;
  }
};

// Blobs in 8 batches of 32, SGD with momentum, accuracy, a row every 4 steps, no validation.
train::TrainSpec counted_spec(train::Precision precision, bool scaled) {
  auto spec = engine::test::blob_spec(31);
  spec.optimizer = std::make_shared<train::FusedSGD>(spec.model.module->parameters(),
                                                     torch::optim::SGDOptions(0.05).momentum(0.9));
  spec.optimizer_name = "SGD";
  spec.validation_data.reset();
  spec.metrics = {"accuracy"};
  spec.options.epochs = 2;
  spec.options.log_every = 4;
  spec.options.deferred_reads = true;
  spec.options.precision = precision;
  spec.options.loss_scale.enabled = scaled;
  return spec;
}

ReadsPerStep count_reads(train::TrainSpec& spec) {
  ReadsPerStep reads;
  const auto handle = at::addThreadLocalCallback(
      at::RecordFunctionCallback(count_read).needsInputs(true).scopes({at::RecordScope::FUNCTION}));
  items_read = copies_read = 0;
  try {
    train::Trainer(spec, {&reads}).run();
  } catch (...) {
    at::removeCallback(handle);
    throw;
  }
  at::removeCallback(handle);
  return reads;
}

}  // namespace

TEST_CASE("a deferred-reads step reads nothing back; a log step one copy") {
  struct Case {
    const char* name;
    train::Precision precision;
    bool scaled;
  };
  for (const Case c : {Case{"float32", train::Precision::kFloat32, false},
                       Case{"bfloat16", train::Precision::kBFloat16, false},
                       Case{"bfloat16, scaled", train::Precision::kBFloat16, true}}) {
    const std::string name = c.name;
    CAPTURE(name);
    auto spec = counted_spec(c.precision, c.scaled);
    const auto reads = count_reads(spec);
    REQUIRE(reads.steps.size() == 16);
    for (size_t i = 0; i < reads.steps.size(); ++i) {
      const int64_t step = static_cast<int64_t>(i) + 1;
      CAPTURE(step);
      const auto [items, copies] = reads.steps[i];
      // the scaler's first step makes SGD's momentum, which an overflow could not undo on the
      // device: it runs as the host's scaler says, reading its flag
      CHECK(items == (c.scaled && step == 1 ? 1 : 0));
      // the row of step 4, 8, 12 (a log step) is read after its report, with step 5's reads;
      // step 8 and 16 end epochs, whose rows are read there too
      const bool after_log_step = step > 1 && (step - 1) % 4 == 0;
      CHECK(copies == (after_log_step ? 1 : 0));
    }
  }
}

TEST_CASE("the scaler kept on the device skips and backs off as the host's does") {
  // a loss scale so large that the first steps overflow and back off (see test_cuda_graphs)
  auto run = [](bool deferred) {
    auto spec = counted_spec(train::Precision::kBFloat16, true);
    spec.options.deferred_reads = deferred;
    spec.options.loss_scale.init_scale = std::ldexp(1.0, 127);
    spec.options.loss_scale.growth_interval = 3;
    auto forward = spec.model.forward;
    spec.model.forward = [forward](const torch::Tensor& x) { return forward(x * 10); };
    engine::test::Recorder recorder;
    train::Trainer(spec, {&recorder}).run();
    return std::make_tuple(recorder.series(), engine::test::all_weights(spec),
                           recorder.data_values("overflow_skipped_steps"));
  };
  const auto [host, host_weights, host_skipped] = run(false);
  const auto [device, device_weights, device_skipped] = run(true);
  REQUIRE(!host_skipped.empty());
  CHECK(host_skipped[0] > 1);  // the case did overflow, after the first step too
  CHECK((host == device));     // loss_scale is in every train row
  CHECK(torch::equal(host_weights, device_weights));
  CHECK(host_skipped == device_skipped);
}

TEST_CASE("a run whose scaler is on the device resumes from a checkpoint to the same series") {
  // the scale, its good-step count and the skipped steps are on the device between log steps:
  // a checkpoint must take them from there
  const auto dir = test::scratch_dir("device-scaler-resume");
  auto spec_for = [&](const std::string& folder) {
    auto spec = counted_spec(train::Precision::kBFloat16, true);
    spec.options.loss_scale.init_scale = std::ldexp(1.0, 127);
    spec.options.loss_scale.growth_interval = 3;
    auto forward = spec.model.forward;
    spec.model.forward = [forward](const torch::Tensor& x) { return forward(x * 10); };
    spec.options.checkpoint.folder = folder;
    spec.options.checkpoint.every_epoch = false;
    spec.options.checkpoint.every_steps = 6;  // between log steps (every 4)
    spec.options.checkpoint.keep_last = 10;
    return spec;
  };
  auto whole = spec_for(dir + "/whole");
  engine::test::Recorder whole_rows;
  train::Trainer(whole, {&whole_rows}).run();

  struct CrashAt : train::Observer {
    void on_progress(const train::Progress& p) override {
      if (p.step == 9) throw std::runtime_error("crash");
    }
  } crash;
  auto crashed = spec_for(dir + "/crashed");
  engine::test::Recorder before;
  CHECK_THROWS_AS(train::Trainer(crashed, {&before, &crash}).run(), std::runtime_error);
  const std::string checkpoint = dir + "/crashed/ckpt-6.h5";
  REQUIRE(std::filesystem::exists(checkpoint));
  const auto info = train::read_checkpoint_info(checkpoint);

  auto resumed = spec_for(dir + "/crashed");
  engine::test::Recorder after;
  train::Trainer trainer(resumed, {&after});
  trainer.resume_from(checkpoint);
  trainer.run();
  CHECK(torch::equal(engine::test::all_weights(resumed), engine::test::all_weights(whole)));
  engine::test::Recorder joined;
  std::map<std::string, int64_t> kept = info.rows;
  for (const auto& r : before.rows) {
    if (kept[r.split]-- > 0) joined.rows.push_back(r);
  }
  for (const auto& r : after.rows) joined.rows.push_back(r);
  REQUIRE(!whole_rows.data_values("overflow_skipped_steps").empty());
  CHECK(whole_rows.data_values("overflow_skipped_steps")[0] > 1);  // it did overflow
  CHECK((joined.series() == whole_rows.series()));                 // loss_scale in every train row
}
