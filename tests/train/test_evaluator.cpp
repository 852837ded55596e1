#include <doctest/doctest.h>

#include <c10/core/InferenceMode.h>

#include "engine/core/errors.hpp"
#include "engine/data/device_prefetcher.hpp"
#include "engine/data/loader.hpp"
#include "engine/train/evaluator.hpp"
#include "engine/train/target_check.hpp"
#include "engine/train/trainer.hpp"
#include "tests/train/blob_spec.hpp"

using namespace engine;
using engine::test::blob_spec;

TEST_CASE("Evaluator: metrics per sample over a pipeline, in evaluation mode, mode restored") {
  auto spec = blob_spec(3, /*dropout=*/0.5);
  int forwards = 0, in_evaluation = 0;
  const auto forward = spec.model.forward;
  spec.model.forward = [&, forward](const torch::Tensor& x) {
    ++forwards;
    if (!spec.model.module->is_training() && c10::InferenceMode::is_enabled()) ++in_evaluation;
    return forward(x);
  };
  spec.model.module->train();
  train::Evaluator evaluator(spec);
  std::vector<int64_t> sizes;
  const auto metrics = evaluator.run(*spec.validation_data,
                                     [&](const data::Batch& batch, const torch::Tensor& output) {
                                       CHECK(output.size(0) == batch.size());
                                       CHECK_FALSE(output.requires_grad());
                                       sizes.push_back(batch.size());
                                     });
  CHECK(sizes == std::vector<int64_t>{100, 100, 56});
  CHECK(forwards == 3);
  CHECK(in_evaluation == 3);
  CHECK(spec.model.module->is_training());
  CHECK(metrics.count("loss") == 1);
  CHECK(metrics.count("accuracy") == 1);
  CHECK(metrics.count("skipped_records") == 0);
  // dropout is off in evaluation: a second pass gives the same figures
  CHECK(train::Evaluator(spec).run(*spec.validation_data) == metrics);
  // the trainer's validation is the same pass
  train::Trainer trainer(spec, {});
  CHECK(trainer.validate() == metrics);
}

TEST_CASE("Evaluator: a hook's ctx logs, cannot backward or step; stop reaches the parent") {
  auto spec = blob_spec(4);
  spec.hooks.evaluate_batch = [](train::StepContext& ctx, const data::Batch& batch) {
    CHECK_FALSE(ctx.training());
    CHECK(ctx.step_index() == 7);
    CHECK_THROWS_WITH_AS(ctx.step(), "ctx:step() cannot be called in evaluate_batch",
                         core::UsageError);
    train::BatchResult r;
    r.output = ctx.spec().model.forward(batch.input);
    CHECK_THROWS_WITH_AS(ctx.backward(r.output.sum()),
                         "ctx:backward() cannot be called in evaluate_batch", core::UsageError);
    ctx.log({{"seen", static_cast<double>(batch.size())}});
    ctx.stop("enough");
    return r;
  };
  train::Evaluator standalone(spec);
  standalone.set_position(2, 7);
  const auto metrics = standalone.run(*spec.validation_data);
  CHECK(metrics.at("seen") == doctest::Approx((100.0 * 100 + 100 * 100 + 56 * 56) / 256));
  CHECK(metrics.count("accuracy") == 1);  // from the returned output

  struct Parent : train::StepContext {
    train::TrainSpec* s;
    std::string reason;
    train::TrainSpec& spec() override { return *s; }
    bool backward(const torch::Tensor&) override { return false; }
    bool step() override { return false; }
    bool step(const std::string&) override { return false; }
    void log(const std::map<std::string, double>&) override {}
    void stop(const std::string& r) override { reason = r; }
    int64_t epoch() const override { return 3; }
    int64_t step_index() const override { return 7; }
    bool training() const override { return true; }
  } parent;
  parent.s = &spec;
  train::Evaluator(spec, &parent).run(*spec.validation_data);
  CHECK(parent.reason == "enough");
}

TEST_CASE("Evaluator: unlabelled batches give outputs, no metrics") {
  auto spec = blob_spec(5);
  auto input = torch::randn({10, 8});
  data::Pipeline unlabelled =
      data::Pipeline(std::make_shared<data::TensorSource>(input, torch::Tensor(), "new rows"))
          .batch(4);
  int64_t rows = 0;
  const auto metrics = train::Evaluator(spec).run(
      unlabelled, [&](const data::Batch& batch, const torch::Tensor&) { rows += batch.size(); });
  CHECK(rows == 10);
  CHECK(metrics.count("loss") == 0);
}

TEST_CASE("Evaluator: an evaluate_batch hook measures unlabelled batches, weighted by size") {
  // a pair network or a generative model: the script's own values, no built-in metric
  auto spec = blob_spec(6);
  spec.hooks.evaluate_batch = [](train::StepContext&, const data::Batch& batch) {
    train::BatchResult r;
    r.values["rows"] = static_cast<double>(batch.size());
    return r;
  };
  data::Pipeline unlabelled =
      data::Pipeline(
          std::make_shared<data::TensorSource>(torch::randn({10, 8}), torch::Tensor(), "new rows"))
          .batch(4);
  const auto metrics = train::Evaluator(spec).run(unlabelled);
  CHECK(metrics.at("rows") == doctest::Approx((4.0 * 4 + 4 * 4 + 2 * 2) / 10));
  CHECK(metrics.count("loss") == 0);
  CHECK(metrics.count("accuracy") == 0);
}

namespace {

// Targets the source does not vouch for (as data.hdf5's): checked batch by batch.
struct UnvouchedSource : data::Source {
  data::TensorSource inner;
  explicit UnvouchedSource(data::TensorSource s) : inner(std::move(s)) {}
  int64_t size() const override { return inner.size(); }
  data::Batch gather(const torch::Tensor& i) const override { return inner.gather(i); }
  std::string describe() const override { return "unvouched"; }
};

}  // namespace

TEST_CASE("TargetCheck: classes checked where the data enters the loss, once when vouched for") {
  auto spec = blob_spec(6);  // the model outputs 4 classes
  auto input = torch::randn({8, 8});
  auto target = torch::tensor({0, 1, 2, 3, 4, 5, 0, 1}, torch::kInt64);
  data::TensorSource six(input, target, "six classes");
  CHECK(six.class_count() == 6);
  spec.train_data = data::Pipeline(std::make_shared<data::TensorSource>(six)).batch(4);
  spec.validation_data.reset();
  train::Trainer trainer(spec, {});
  CHECK_THROWS_WITH_AS(trainer.run(),
                       doctest::Contains("the data six classes (8 samples, input [8]) has 6 "
                                         "classes but the model outputs 4 scores per sample"),
                       core::ScriptError);
  // an evaluation of the same data says the same
  CHECK_THROWS_WITH_AS(train::Evaluator(spec).run(*spec.train_data),
                       doctest::Contains("has 6 classes but the model outputs 4"),
                       core::ScriptError);
  // a source that cannot vouch: each batch's targets are read; the first batch is in range
  auto unvouched = data::Pipeline(std::make_shared<UnvouchedSource>(six)).batch(4);
  CHECK_FALSE(unvouched.source().class_count().has_value());
  CHECK_THROWS_WITH_AS(train::Evaluator(spec).run(unvouched),
                       doctest::Contains("class 6 is out of range 1..4"), core::ScriptError);
  // negative targets are not classes a source can vouch for
  CHECK_FALSE(data::TensorSource(input, target - 1, "shifted").class_count().has_value());
}

TEST_CASE("TargetCheck: a range read on the host before the copy reads nothing back") {
  // an unvouched source's batches: the prefetcher reads each target's classes on the host
  auto target = torch::tensor({0, 5, 2, 3, 4, 1, 0, 1}, torch::kInt64);
  data::TensorSource six(torch::randn({8, 8}), target, "six classes");
  auto pipeline = data::Pipeline(std::make_shared<UnvouchedSource>(six)).batch(4);
  data::EpochReader reader(pipeline, 1, 0, 0, false, false);
  data::DevicePrefetcher batches([&reader] { return reader.next(); }, torch::kCPU, {},
                                 /*target_range=*/true);
  std::vector<std::pair<int64_t, int64_t>> ranges;
  while (auto batch = batches.next()) ranges.push_back(batch->target_range.value());
  CHECK((ranges == std::vector<std::pair<int64_t, int64_t>>{{0, 5}, {0, 4}}));

  // on a device with no host memory (meta stands in for a GPU) the check takes the range as
  // read: a read of the target itself would fail there
  train::TargetCheck check(pipeline);
  REQUIRE(check.reads_every_batch());
  const auto meta = torch::TensorOptions().device(torch::kMeta);
  const auto output = torch::empty({4, 6}, meta);
  const auto on_device = torch::empty({4}, meta.dtype(torch::kInt64));
  const auto loss = nn::Loss(nn::Loss::Kind::kCrossEntropy);
  CHECK_NOTHROW(check(loss, output, on_device, std::make_pair<int64_t, int64_t>(0, 5)));
  CHECK_THROWS_WITH_AS(
      check(loss, torch::empty({4, 4}, meta), on_device, std::make_pair<int64_t, int64_t>(0, 5)),
      doctest::Contains("class 6 is out of range 1..4"), core::ScriptError);
}

TEST_CASE("Evaluator: the combining step also receives the records skipped as bad") {
  auto spec = blob_spec(3);
  train::Evaluator evaluator(spec);
  const auto alone = evaluator.run(*spec.validation_data);
  // a stand-in for the sum over ranks: another rank skipped 4 records as bad
  int calls = 0;
  evaluator.combine_with([&calls](train::MetricAccumulator&, int64_t& skipped) {
    ++calls;
    CHECK(skipped == 0);
    skipped += 4;
  });
  const auto combined = evaluator.run(*spec.validation_data);
  CHECK(combined.at("loss") == doctest::Approx(alone.at("loss")));
  CHECK(combined.at("accuracy") == doctest::Approx(alone.at("accuracy")));
  CHECK(combined.at("skipped_records") == 4);
  CHECK(calls == 1);
}
