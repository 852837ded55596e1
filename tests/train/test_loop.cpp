// The trainer's loop options: accumulation, clipping, NaN handling, early stopping, hooks,
// callbacks and Ctrl-C.
#include <doctest/doctest.h>

#include <csignal>
#include <filesystem>

#include "engine/core/errors.hpp"
#include "engine/core/interrupt.hpp"
#include "engine/train/step_context.hpp"
#include "engine/train/trainer.hpp"
#include "tests/test_support.hpp"
#include "tests/train/blob_spec.hpp"

using namespace engine;
using engine::test::all_weights;
using engine::test::blob_spec;
using engine::test::Recorder;

namespace {

void plain_sgd(train::TrainSpec& spec, double lr) {
  spec.optimizer = std::make_shared<torch::optim::SGD>(spec.model.module->parameters(),
                                                       torch::optim::SGDOptions(lr));
}

// A train_batch hook doing what the built-in step does, with a loss the test may change.
train::BatchResult default_like_step(train::StepContext& ctx, const data::Batch& batch,
                                     double loss_factor = 1.0) {
  auto& spec = ctx.spec();
  auto output = spec.model.forward(batch.input);
  auto loss = (*spec.loss)(output, batch.target) * loss_factor;
  ctx.backward(loss);
  ctx.step();
  return {{{"loss", loss.item<double>()}}, output};
}

}  // namespace

TEST_CASE("accumulating two batches of 32 steps like one batch of 64") {
  auto small = blob_spec(5);
  plain_sgd(small, 0.1);
  small.options.accumulate = 2;
  small.options.epochs = 2;
  auto large = blob_spec(5, 0, false, 64);
  plain_sgd(large, 0.1);
  large.options.epochs = 2;
  auto a = train::Trainer(small, {}).run();
  auto b = train::Trainer(large, {}).run();
  CHECK(a.steps == 8);  // 8 batches of 32 per epoch, 4 steps
  CHECK(b.steps == 8);
  CHECK(torch::allclose(all_weights(small), all_weights(large), 1e-5, 1e-6));
}

TEST_CASE("an epoch whose batches do not fill the last accumulation group still steps") {
  auto spec = blob_spec(5);
  spec.options.accumulate = 3;  // 8 batches: groups of 3, 3 and 2
  spec.options.epochs = 1;
  Recorder rec;
  auto result = train::Trainer(spec, {&rec}).run();
  CHECK(result.steps == 3);
}

TEST_CASE("clipping by value bounds each weight's change; by norm, the whole change") {
  for (const bool by_norm : {false, true}) {
    auto spec = blob_spec(2);
    plain_sgd(spec, 1.0);
    spec.options.steps = 1;
    spec.validation_data.reset();
    (by_norm ? spec.options.clip_grad_norm : spec.options.clip_grad_value) = 1e-3;
    auto before = all_weights(spec).clone();
    train::Trainer(spec, {}).run();
    auto change = all_weights(spec) - before;
    if (by_norm) {
      CHECK(change.norm().item<double>() <= 1e-3 * 1.0001);
      CHECK(change.norm().item<double>() > 1e-4);
    } else {
      CHECK(change.abs().max().item<double>() <= 1e-3 * 1.0001);
    }
  }
}

TEST_CASE("a NaN loss stops the run naming the step, or is skipped with on_nan = 'skip'") {
  auto poisoned = [](train::StepContext& ctx, const data::Batch& batch) {
    const bool poison = ctx.step_index() == 2;
    return default_like_step(ctx, batch, poison ? std::nan("") : 1.0);
  };
  {
    auto spec = blob_spec(1);
    spec.hooks.train_batch = poisoned;
    CHECK_THROWS_WITH_AS(train::Trainer(spec, {}).run(),
                         doctest::Contains("the loss is nan at step 3 (epoch 1, batch 3)"),
                         core::TrainingError);
  }
  auto spec = blob_spec(1);
  spec.hooks.train_batch = poisoned;
  spec.options.on_nan = train::NanPolicy::kSkip;
  spec.options.epochs = 1;
  Recorder rec;
  auto result = train::Trainer(spec, {&rec}).run();
  CHECK(result.steps == 8);  // the skipped batch still counts as a step, without an update
  CHECK(torch::isfinite(all_weights(spec)).all().item<bool>());
  REQUIRE(rec.epochs.size() == 1);
  CHECK(rec.epochs[0].nan_skipped == 1);
  CHECK(std::isfinite(rec.epochs[0].train.at("loss")));
  bool recorded = false;
  for (const auto& r : rec.rows) {
    if (r.split == "data") recorded = r.values.at("nan_skipped_batches") == 1;
  }
  CHECK(recorded);
}

TEST_CASE("early stopping ends the run when the watched metric stops improving") {
  auto spec = blob_spec(3);
  spec.options.epochs = 10;
  train::EarlyStopping es;
  es.goal = train::parse_goal("validation.accuracy");
  es.patience = 2;
  es.min_delta = 1.0;  // no accuracy can improve by 1: only the first validation counts
  spec.options.early_stopping = es;
  auto result = train::Trainer(spec, {}).run();
  CHECK(result.epochs == 3);
  CHECK(result.stop_reason.find("early stopping: validation.accuracy did not improve for 2 "
                                "validations") != std::string::npos);

  // a metric the run does not log fails before the first step
  auto missing = blob_spec(3);
  es.goal = train::parse_goal("validation.f1");
  missing.options.early_stopping = es;
  CHECK_THROWS_WITH_AS(train::Trainer(missing, {}),
                       doctest::Contains("early_stopping watches validation.f1, which the run does "
                                         "not log (it logs validation.loss, validation.accuracy, "
                                         "validation.top2"),
                       core::UsageError);
  // unless a hook may log it: then after the first validation that lacks it
  missing.hooks.evaluate_batch = [](train::StepContext& ctx, const data::Batch& batch) {
    train::BatchResult r;
    r.output = ctx.spec().model.forward(batch.input);
    r.values["loss"] = (*ctx.spec().loss)(r.output, batch.target).item<double>();
    return r;
  };
  CHECK_THROWS_WITH_AS(train::Trainer(missing, {}).run(),
                       doctest::Contains("validation.f1 is not logged"), core::UsageError);
}

TEST_CASE("without validation data, train metrics are watched at the end of every epoch") {
  auto spec = blob_spec(3);
  spec.validation_data.reset();
  spec.options.epochs = 10;
  train::EarlyStopping es;
  es.goal = train::parse_goal("train.loss");
  es.patience = 2;
  es.min_delta = 100.0;  // only the first epoch counts as an improvement
  spec.options.early_stopping = es;
  train::PlateauOptions p;
  p.metric = "train.loss";
  p.patience = 0;
  p.factor = 0.5;
  p.threshold = 100.0;  // absolute: only the first epoch counts as an improvement
  p.relative = false;
  spec.scheduler = std::make_shared<train::ReduceLROnPlateau>(spec.optimizer, p);
  auto result = train::Trainer(spec, {}).run();
  CHECK(result.epochs == 3);
  CHECK(result.stop_reason.find("early stopping: train.loss") != std::string::npos);
  CHECK(train::current_lr(*spec.optimizer) == doctest::Approx(0.05 * 0.25));

  auto no_validation = blob_spec(3);
  no_validation.validation_data.reset();
  p.metric = "validation.loss";
  no_validation.scheduler = std::make_shared<train::ReduceLROnPlateau>(no_validation.optimizer, p);
  CHECK_THROWS_WITH_AS(train::Trainer(no_validation, {}),
                       doctest::Contains("ReduceLROnPlateau watches validation.loss but the "
                                         "script has no validation data"),
                       core::UsageError);
}

TEST_CASE("hooks see the context; callbacks run in order; ctx.stop ends the run") {
  auto spec = blob_spec(4);
  std::vector<std::string> events;
  spec.hooks.train_batch = [&](train::StepContext& ctx, const data::Batch& batch) {
    CHECK(ctx.training());
    ctx.log({{"extra", 2.0}});
    return default_like_step(ctx, batch);
  };
  spec.hooks.evaluate_batch = [&](train::StepContext& ctx, const data::Batch& batch) {
    CHECK_FALSE(ctx.training());
    CHECK_THROWS_AS(ctx.step(), core::UsageError);
    train::BatchResult r;
    r.output = ctx.spec().model.forward(batch.input);
    r.values["loss"] = (*ctx.spec().loss)(r.output, batch.target).item<double>();
    return r;
  };
  spec.hooks.on_epoch_start = [&](train::StepContext& ctx) {
    events.push_back("start " + std::to_string(ctx.epoch()));
  };
  spec.hooks.on_validation_end = [&](train::StepContext&, const std::map<std::string, double>& m) {
    events.push_back(m.count("accuracy") ? "validated" : "validated without accuracy");
  };
  spec.hooks.on_epoch_end = [&](train::StepContext& ctx, const std::map<std::string, double>& m) {
    events.push_back("end " + std::to_string(ctx.epoch()) + (m.count("extra") ? " extra" : ""));
    if (ctx.epoch() == 2) ctx.stop("enough");
  };
  auto result = train::Trainer(spec, {}).run();
  CHECK(events == std::vector<std::string>{"start 1", "validated", "end 1 extra", "start 2",
                                           "validated", "end 2 extra"});
  CHECK(result.epochs == 2);
  CHECK(result.stop_reason == "enough");
  CHECK(result.last_validation.at("accuracy") > 0.5);  // computed from the hook's output
}

TEST_CASE("a hook that steps twice for one batch is an error") {
  auto spec = blob_spec(4);
  spec.hooks.train_batch = [](train::StepContext& ctx, const data::Batch& batch) {
    auto r = default_like_step(ctx, batch);
    ctx.step();
    return r;
  };
  CHECK_THROWS_WITH_AS(train::Trainer(spec, {}).run(), doctest::Contains("twice"),
                       core::UsageError);
}

TEST_CASE("SIGINT finishes the step, writes a checkpoint and stops with Interrupted") {
  const auto dir = test::scratch_dir("interrupt");
  auto spec = blob_spec(6);
  spec.options.checkpoint.folder = dir;
  spec.options.checkpoint.every_epoch = false;
  spec.hooks.on_epoch_end = [](train::StepContext&, const std::map<std::string, double>&) {
    std::raise(SIGINT);  // as Ctrl-C would, in the middle of the run
  };
  Recorder rec;
  train::Trainer trainer(spec, {&rec});
  {
    core::InterruptScope interrupts(core::kTrainingInterruptMessage);
    try {
      trainer.run();
      FAIL("the run was not interrupted");
    } catch (const core::Interrupted& e) {
      CHECK(e.exit_code() == 130);
      CHECK(std::string(e.what()).find("interrupted by SIGINT at step 8") != std::string::npos);
    }
  }
  CHECK(core::pending_interrupt() == 0);  // the scope forgot it
  CHECK(rec.checkpoints == std::vector<std::string>{dir + "/ckpt-8.h5"});
  CHECK(std::filesystem::exists(dir + "/ckpt-8.h5"));
  CHECK_FALSE(std::filesystem::exists(dir + "/ckpt-8.h5.tmp"));
}

TEST_CASE("ReduceLROnPlateau gets the watched validation metric after every validation") {
  auto spec = blob_spec(7);
  train::PlateauOptions p;
  p.metric = "validation.loss";
  p.maximize = true;  // the loss falls, so after the first validation it never "improves"
  p.patience = 0;
  p.factor = 0.5;
  spec.scheduler = std::make_shared<train::ReduceLROnPlateau>(spec.optimizer, p);
  spec.options.epochs = 4;
  train::Trainer(spec, {}).run();
  CHECK(train::current_lr(*spec.optimizer) == doctest::Approx(0.05 * 0.125));
}

TEST_CASE("LBFGS trains with the built-in step, re-evaluating the loss in its closure") {
  auto spec = blob_spec(10);
  spec.optimizer = std::make_shared<torch::optim::LBFGS>(
      spec.model.module->parameters(), torch::optim::LBFGSOptions(0.5).max_iter(5));
  spec.options.epochs = 2;
  train::Trainer trainer(spec, {});
  const double before = trainer.validate().at("loss");
  auto result = trainer.run();
  CHECK(result.steps == 16);
  CHECK(result.last_validation.at("loss") < before * 0.5);

  auto hooked = blob_spec(10);
  hooked.optimizer = std::make_shared<torch::optim::LBFGS>(hooked.model.module->parameters());
  hooked.options.accumulate = 2;
  CHECK_THROWS_WITH_AS(train::Trainer(hooked, {}), doctest::Contains("LBFGS re-evaluates"),
                       core::UsageError);
}

TEST_CASE("bfloat16 autocast trains on CPU and keeps float32 weights") {
  auto spec = blob_spec(12);
  spec.options.precision = train::Precision::kBFloat16;
  spec.options.epochs = 3;
  train::Trainer trainer(spec, {});
  const double before = trainer.validate().at("loss");
  auto result = trainer.run();
  CHECK(result.last_validation.at("loss") < before * 0.7);
  CHECK(result.last_validation.at("accuracy") > 0.8);
  for (const auto& p : spec.model.module->parameters()) CHECK((p.scalar_type() == torch::kFloat32));
}

TEST_CASE("loss scaling by powers of two gives the unscaled run's weights exactly") {
  auto plain = blob_spec(13);
  Recorder plain_rows;
  train::Trainer(plain, {&plain_rows}).run();

  auto scaled = blob_spec(13);
  scaled.options.loss_scale.enabled = true;
  scaled.options.loss_scale.growth_interval = 3;  // 32 good steps: the scale doubles 10 times
  Recorder scaled_rows;
  train::Trainer trainer(scaled, {&scaled_rows});
  trainer.run();
  CHECK(torch::equal(all_weights(scaled), all_weights(plain)));
  CHECK(trainer.state().grad_scale == 65536.0 * 1024);
  REQUIRE(scaled_rows.rows.size() == plain_rows.rows.size());
  for (size_t i = 0; i < plain_rows.rows.size(); ++i) {
    auto values = scaled_rows.rows[i].values;
    if (scaled_rows.rows[i].split == "train") {
      CHECK(values.count("loss_scale") == 1);
      values.erase("loss_scale");
    } else if (scaled_rows.rows[i].split == "data") {
      CHECK(values.at("overflow_skipped_steps") == 0);
      continue;  // timings
    }
    CHECK(values == plain_rows.rows[i].values);
  }
}

TEST_CASE("an overflowing gradient skips the step, backs the scale off and is counted") {
  auto spec = blob_spec(14);
  spec.options.epochs = 1;  // 8 batches
  spec.options.log_every = 1;
  spec.options.loss_scale.enabled = true;
  spec.options.loss_scale.growth_interval = 3;
  std::vector<torch::Tensor> before;  // the weights as each batch starts
  spec.hooks.train_batch = [&](train::StepContext& ctx, const data::Batch& batch) {
    before.push_back(all_weights(ctx.spec()).clone());
    auto output = ctx.spec().model.forward(batch.input);
    auto loss = (*ctx.spec().loss)(output, batch.target);
    const double value = loss.item<double>();
    // still finite, but times the scale (65536) its gradient overflows float32
    if (ctx.step_index() == 2) loss = loss * 1e36;
    ctx.backward(loss);
    return train::BatchResult{{{"loss", value}}, output};
  };
  Recorder rec;
  train::Trainer trainer(spec, {&rec});
  trainer.run();
  REQUIRE(before.size() == 8);
  CHECK_FALSE(torch::equal(before[1], before[2]));  // step 2 was taken
  CHECK(torch::equal(before[2], before[3]));        // step 3 was skipped
  CHECK_FALSE(torch::equal(before[3], before[4]));  // and training went on
  CHECK(trainer.state().step == 8);  // a skipped step still counts, as for PyTorch's schedulers
  std::vector<double> scales;
  for (const auto& r : rec.rows) {
    if (r.split == "train") scales.push_back(r.values.at("loss_scale"));
    if (r.split == "data") CHECK(r.values.at("overflow_skipped_steps") == 1);
  }
  // two good steps, an overflow (halve, count from zero), three good ones (double), two more
  CHECK(scales == std::vector<double>{65536, 65536, 32768, 32768, 32768, 65536, 65536, 65536});
  REQUIRE(rec.epochs.size() == 1);
  CHECK(rec.epochs[0].overflow_skipped == 1);

  auto lbfgs = blob_spec(14);
  lbfgs.optimizer = std::make_shared<torch::optim::LBFGS>(lbfgs.model.module->parameters());
  lbfgs.options.loss_scale.enabled = true;
  CHECK_THROWS_WITH_AS(train::Trainer(lbfgs, {}), doctest::Contains("no float16 or loss_scale"),
                       core::UsageError);
}
