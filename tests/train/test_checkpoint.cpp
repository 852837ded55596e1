// Checkpoints: what they hold, the keep policies, and exact resume inside one process (the
// command-line tests kill a real process with SIGKILL).
#include <doctest/doctest.h>

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>

#include "engine/core/errors.hpp"
#include "engine/core/interrupt.hpp"
#include "engine/io/hdf5.hpp"
#include "engine/io/tensor_archive.hpp"
#include "engine/train/checkpoint.hpp"
#include "engine/train/trainer.hpp"
#include "tests/test_support.hpp"
#include "tests/train/blob_spec.hpp"

using namespace engine;
using engine::test::all_weights;
using engine::test::blob_spec;
using engine::test::Recorder;
namespace fs = std::filesystem;

namespace {

// Dropout, Adam, a per-step cosine schedule, accumulation, loss scaling, shuffling, logging
// windows that straddle checkpoints: everything a resume must restore.
train::TrainSpec resumable_spec(const std::string& folder) {
  auto spec = blob_spec(21, 0.3, true);
  spec.scheduler =
      std::make_shared<train::ClosedFormLR>(spec.optimizer, train::cosine_annealing_rate(20, 0.0),
                                            train::StepMode::kStep, "CosineAnnealingLR");
  spec.metrics = {"accuracy", "f1"};
  spec.options.epochs = 4;
  spec.options.accumulate = 3;             // 8 batches per epoch: steps of 3, 3 and 2 batches
  spec.options.loss_scale.enabled = true;  // its scale, logged, changes every 2 steps
  spec.options.loss_scale.growth_interval = 2;
  spec.options.log_every = 2;
  spec.options.validate_every_steps = 5;
  spec.options.checkpoint.folder = folder;
  spec.options.checkpoint.every_epoch = false;
  spec.options.checkpoint.every_steps = 4;
  spec.options.checkpoint.keep_last = 10;
  return spec;
}

// blob_spec(9) trained one epoch (8 steps), its checkpoint ckpt-8.h5 in folder.
train::TrainSpec one_epoch_with_checkpoint(const std::string& folder) {
  auto spec = blob_spec(9);
  spec.options.epochs = 1;
  spec.options.checkpoint.folder = folder;
  train::Trainer(spec, {}).run();
  return spec;
}

struct Crash : std::runtime_error {
  Crash() : std::runtime_error("crash") {}
};

}  // namespace

TEST_CASE("a run resumed from a mid-epoch checkpoint ends bit for bit like an uninterrupted one") {
  const auto dir = test::scratch_dir("resume");
  auto whole = resumable_spec(dir + "/whole");
  Recorder whole_rows;
  train::Trainer(whole, {&whole_rows}).run();

  // the same run, crashing at step 10 (after its checkpoint at step 8, mid-epoch 3)
  auto crashed = resumable_spec(dir + "/crashed");
  crashed.hooks.on_validation_end = [](train::StepContext& ctx, const auto&) {
    if (ctx.step_index() == 10) throw Crash();
  };
  Recorder before;
  CHECK_THROWS_AS(train::Trainer(crashed, {&before}).run(), Crash);
  const std::string checkpoint = dir + "/crashed/ckpt-8.h5";
  REQUIRE(fs::exists(checkpoint));
  auto info = train::read_checkpoint_info(checkpoint);
  CHECK(info.step == 8);

  auto resumed = resumable_spec(dir + "/crashed");
  torch::manual_seed(12345);  // whatever the generator holds now, the checkpoint's state wins
  Recorder after;
  train::Trainer trainer(resumed, {&after});
  trainer.resume_from(checkpoint);
  CHECK(trainer.state().step == 8);
  CHECK(trainer.state().epoch == 2);
  CHECK(trainer.state().epoch_position == 192);  // steps 7 and 8 of epoch 3: 6 batches of 32
  trainer.run();

  CHECK(torch::equal(all_weights(resumed), all_weights(whole)));
  // the rows written before the checkpoint, then the resumed ones: the uninterrupted series
  Recorder joined;
  std::map<std::string, int64_t> kept = info.rows;
  for (const auto& r : before.rows) {
    if (kept[r.split]-- > 0) joined.rows.push_back(r);
  }
  for (const auto& r : after.rows) joined.rows.push_back(r);
  CHECK((joined.series() == whole_rows.series()));
}

// Raises SIGINT, as Ctrl-C would, when the run has taken the given step.
struct InterruptAtStep : train::Observer {
  int64_t step;
  explicit InterruptAtStep(int64_t at) : step(at) {}
  void on_progress(const train::Progress& p) override {
    if (p.step == step) std::raise(SIGINT);
  }
};

TEST_CASE("Ctrl-C at the step that ends an epoch or the run waits for the epoch's validation") {
  // 8 steps an epoch; 20 steps end inside epoch 3; `steps` 0: two whole epochs (16 steps)
  struct Case {
    int64_t steps, interrupt_at, interrupted_at;
  };
  for (const Case c : {Case{0, 16, 16}, Case{0, 8, 8}, Case{20, 20, 20}}) {
    CAPTURE(c.steps);
    CAPTURE(c.interrupt_at);
    const auto dir = test::scratch_dir("interrupt-at-end");
    auto spec_for = [&](const std::string& folder) {
      auto spec = blob_spec(22);
      spec.options.epochs = c.steps > 0 ? 0 : 2;
      spec.options.steps = c.steps;
      spec.options.checkpoint.folder = folder;
      spec.options.checkpoint.every_epoch = false;
      return spec;
    };
    auto whole = spec_for(dir + "/whole");
    Recorder whole_rows;
    const auto whole_result = train::Trainer(whole, {&whole_rows}).run();

    auto stopped = spec_for(dir + "/stopped");
    Recorder before;
    InterruptAtStep interrupt(c.interrupt_at);
    {
      core::InterruptScope interrupts(core::kTrainingInterruptMessage);
      train::Trainer trainer(stopped, {&before, &interrupt});
      CHECK_THROWS_AS(trainer.run(), core::Interrupted);
    }
    const std::string checkpoint =
        dir + "/stopped/ckpt-" + std::to_string(c.interrupted_at) + ".h5";
    REQUIRE(fs::exists(checkpoint));
    // the step's epoch was ended before the checkpoint: validated, its rows written
    auto validated = [](const Recorder& r, int64_t step) {
      return std::count_if(r.rows.begin(), r.rows.end(), [&](const train::MetricRow& row) {
        return row.split == "validation" && row.step == step;
      });
    };
    CHECK(validated(before, c.interrupted_at) == 1);

    auto resumed = spec_for(dir + "/stopped");
    Recorder after;
    train::Trainer trainer(resumed, {&after});
    trainer.resume_from(checkpoint);
    const auto result = trainer.run();
    CHECK(torch::equal(all_weights(resumed), all_weights(whole)));
    CHECK(result.last_validation == whole_result.last_validation);
    Recorder joined;
    auto info = train::read_checkpoint_info(checkpoint);
    std::map<std::string, int64_t> kept = info.rows;
    for (const auto& r : before.rows) {
      if (kept[r.split]-- > 0) joined.rows.push_back(r);
    }
    for (const auto& r : after.rows) joined.rows.push_back(r);
    CHECK((joined.series() == whole_rows.series()));
    const int64_t last = c.steps > 0 ? c.steps : 16;
    CHECK(validated(joined, last) == 1);
    CHECK(result.last_validation.count("loss") == 1);  // what a search reads as its objective
  }
}

TEST_CASE("an LBFGS run checkpoints and resumes bit for bit (its scratch list included)") {
  const auto dir = test::scratch_dir("resume_lbfgs");
  auto lbfgs = [&](const std::string& folder) {
    auto spec = blob_spec(17);
    spec.optimizer = std::make_shared<torch::optim::LBFGS>(
        spec.model.module->parameters(), torch::optim::LBFGSOptions(0.5).max_iter(4));
    spec.optimizer_name = "LBFGS";
    spec.options.epochs = 2;  // 8 steps per epoch
    spec.options.checkpoint.folder = folder;
    spec.options.checkpoint.every_epoch = false;
    spec.options.checkpoint.every_steps = 5;
    spec.options.checkpoint.keep_last = 10;
    return spec;
  };
  auto whole = lbfgs(dir + "/whole");
  Recorder whole_rows;
  train::Trainer(whole, {&whole_rows}).run();
  const std::string checkpoint = dir + "/whole/ckpt-5.h5";
  REQUIRE(fs::exists(checkpoint));

  auto resumed = lbfgs(dir + "/resumed");
  train::Trainer trainer(resumed, {});
  trainer.resume_from(checkpoint);
  trainer.run();
  CHECK(torch::equal(all_weights(resumed), all_weights(whole)));
}

TEST_CASE("keep_last deletes older checkpoints; keep_best keeps the best one as well") {
  const auto dir = test::scratch_dir("keep");
  auto spec = blob_spec(8);
  spec.options.epochs = 5;
  spec.options.checkpoint.folder = dir;
  spec.options.checkpoint.keep_last = 2;
  spec.options.checkpoint.keep_best = train::parse_goal("validation.loss");
  Recorder rec;
  auto result = train::Trainer(spec, {&rec}).run();
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) files.push_back(e.path().filename().string());
  std::sort(files.begin(), files.end());
  // the loss falls every epoch here, so the best is the last
  CHECK(files == std::vector<std::string>{"ckpt-32.h5", "ckpt-40.h5"});
  CHECK(result.best_checkpoint == dir + "/ckpt-40.h5");
  CHECK(rec.removed.size() == 3);

  // a best that stops improving stays while newer ones come and go
  const auto dir2 = test::scratch_dir("keep-best");
  auto spec2 = blob_spec(8);
  spec2.options.epochs = 5;
  spec2.options.checkpoint.folder = dir2;
  spec2.options.checkpoint.keep_last = 1;
  spec2.options.checkpoint.keep_best = train::parse_goal("train.loss", "max");  // the first
  auto result2 = train::Trainer(spec2, {}).run();
  CHECK(result2.best_checkpoint == dir2 + "/ckpt-8.h5");
  CHECK(fs::exists(dir2 + "/ckpt-8.h5"));
  CHECK(fs::exists(dir2 + "/ckpt-40.h5"));
  CHECK_FALSE(fs::exists(dir2 + "/ckpt-16.h5"));
}

TEST_CASE("a checkpoint holds the model under PyTorch's names, readable without the engine") {
  const auto dir = test::scratch_dir("ckpt-layout");
  auto spec = blob_spec(9, 0, true);
  spec.options.epochs = 1;
  spec.options.checkpoint.folder = dir;
  train::Trainer(spec, {}).run();
  auto file = io::h5::open_file(dir + "/ckpt-8.h5", false);
  auto model = io::h5::open_group(file.get(), "model");
  CHECK(io::members(model.get()) ==
        std::vector<std::string>{"0.bias", "0.weight", "2.bias", "2.weight"});
  auto w = io::read_tensor(model.get(), "0.weight");
  CHECK(torch::equal(w, spec.model.module->named_parameters()["0.weight"]));
  auto state = io::h5::open_group(file.get(), "optimizer/state/0.weight");
  CHECK(io::read_tensor(state.get(), "exp_avg").sizes() == w.sizes());
  CHECK(io::h5::read_int_attribute(file.get(), "step") == 8);
}

TEST_CASE("loading a checkpoint into another model lists every tensor that does not fit") {
  const auto dir = test::scratch_dir("ckpt-mismatch");
  auto spec = one_epoch_with_checkpoint(dir);
  torch::nn::Sequential other(torch::nn::Linear(8, 32), torch::nn::ReLU(),
                              torch::nn::Linear(32, 4));
  const auto before = other->parameters()[0].clone();
  for (const char* line :
       {"3 tensors do not fit:",
        "/model/0.weight: 16x8 in the checkpoint, 32x8 in this script's model",
        "/model/0.bias: 16 in the checkpoint, 32 in this script's model",
        "/model/2.weight: 4x16 in the checkpoint, 4x32 in this script's model"}) {
    CHECK_THROWS_WITH_AS(train::load_model_weights(dir + "/ckpt-8.h5", *other.ptr()),
                         doctest::Contains(line), core::DataError);
  }
  CHECK(torch::equal(before, other->parameters()[0]));  // nothing loaded at all
  CHECK_THROWS_WITH_AS(train::load_model_weights(dir + "/nothing.h5", *other.ptr()),
                       doctest::Contains("does not exist"), core::DataError);
  // every error names the flag the path came from
  CHECK_THROWS_WITH_AS(
      train::resolve_checkpoint(dir + "/nothing.h5", "--checkpoint"),
      doctest::Contains(("--checkpoint " + dir + "/nothing.h5: no such file").c_str()),
      core::UsageError);
  CHECK_THROWS_WITH_AS(train::resolve_checkpoint(dir + "/nothing.h5", "--resume"),
                       doctest::Contains("--resume "), core::UsageError);
  io::h5::create_file(dir + "/empty.h5");  // closed at once: an HDF5 file with nothing in it
  CHECK_THROWS_WITH_AS(
      train::resolve_checkpoint(dir + "/empty.h5", "--checkpoint"),
      doctest::Contains(("--checkpoint " + dir + "/empty.h5: neither a checkpoint").c_str()),
      core::DataError);
  CHECK(train::resolve_checkpoint(dir + "/ckpt-8.h5", "--resume") == dir + "/ckpt-8.h5");
}

TEST_CASE("a checkpoint of a newer format is refused by every reader, naming it") {
  const auto dir = test::scratch_dir("ckpt-format");
  auto spec = one_epoch_with_checkpoint(dir);
  const std::string path = dir + "/ckpt-8.h5";
  {
    auto file = io::h5::open_file(path, true);
    io::h5::write_attribute(file.get(), "format_version", int64_t{99});
  }
  const std::string says = path + ": format_version 99 was written by a newer engine";
  CHECK_THROWS_WITH_AS(train::read_checkpoint_info(path), doctest::Contains(says.c_str()),
                       core::DataError);
  CHECK_THROWS_WITH_AS(train::load_model_weights(path, *spec.model.module),
                       doctest::Contains(says.c_str()), core::DataError);
  CHECK_THROWS_WITH_AS(train::load_checkpoint(path, spec), doctest::Contains(says.c_str()),
                       core::DataError);
}

TEST_CASE("a flipped byte in a checkpoint's tensor is found on loading, naming the tensor") {
  const auto dir = test::scratch_dir("ckpt-flipped");
  auto spec = one_epoch_with_checkpoint(dir);
  const std::string path = dir + "/ckpt-8.h5";
  haddr_t address = 0;
  {
    auto file = io::h5::open_file(path, false);
    auto weight = io::h5::open_dataset(file.get(), "model/0.weight");
    hsize_t size = 0;
    unsigned mask = 0;
    hsize_t offset[2] = {0, 0};
    const hid_t space = H5Dget_space(weight.get());
    const herr_t found = H5Dget_chunk_info(weight.get(), space, 0, offset, &mask, &address, &size);
    H5Sclose(space);
    REQUIRE(found >= 0);  // written chunked, with its checksum
    REQUIRE(size > 64);
  }
  // 8 bytes in the middle of the weights, as a disk or a copy might change them
  std::fstream bytes(path, std::ios::in | std::ios::out | std::ios::binary);
  bytes.seekp(static_cast<std::streamoff>(address + 40));
  bytes.write("\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f", 8);
  bytes.close();
  CHECK_THROWS_WITH_AS(train::load_model_weights(path, *spec.model.module),
                       doctest::Contains("0.weight: its bytes do not match their checksum: the "
                                         "file is damaged"),
                       core::DataError);
  CHECK_THROWS_WITH_AS(train::load_checkpoint(path, spec), doctest::Contains("0.weight"),
                       core::DataError);
}
