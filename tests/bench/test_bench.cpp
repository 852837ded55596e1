#include <doctest/doctest.h>

#include <cmath>

#include <c10/core/InferenceMode.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>

#include "engine/bench/point.hpp"
#include "engine/bench/timing.hpp"
#include "engine/core/errors.hpp"

using namespace engine;

namespace {

nn::Model tiny_model(bool log_softmax) {
  torch::nn::Sequential seq(torch::nn::Flatten(), torch::nn::Linear(6, 4));
  if (log_softmax) seq->push_back(torch::nn::LogSoftmax(1));
  return nn::Model{seq.ptr(), [seq](const torch::Tensor& x) mutable { return seq->forward(x); }};
}

bench::PointOptions tiny_options(bench::Phase phase) {
  bench::PointOptions o;
  o.input_shape = {2, 3};
  o.classes = 4;
  o.batch_size = 5;
  o.warmup_batches = 2;
  o.batches = 7;
  o.phase = phase;
  return o;
}

}  // namespace

TEST_CASE("summarize: mean, sample std, nearest-rank percentiles, throughput") {
  const auto s = bench::summarize({10, 1, 9, 2, 8, 3, 7, 4, 6, 5}, 20);
  CHECK(s.batches == 10);
  CHECK(s.mean_ms == doctest::Approx(5.5));
  CHECK(s.std_ms == doctest::Approx(3.0276503540974917));
  CHECK(s.min_ms == 1);
  CHECK(s.max_ms == 10);
  CHECK(s.p50_ms == 5);
  CHECK(s.p90_ms == 9);
  CHECK(std::isnan(s.p99_ms));  // 10 batches back a p90, not a p99
  std::vector<double> hundred;
  for (int i = 100; i >= 1; --i) hundred.push_back(i);
  const auto many = bench::summarize(hundred, 20);
  CHECK(many.p90_ms == 90);
  CHECK(many.p99_ms == 99);
  CHECK(s.throughput == doctest::Approx(20 * 1000.0 / 5.5));
  CHECK(s.throughput_p50 == doctest::Approx(20 * 1000.0 / 5));
  const auto one = bench::summarize({4}, 2);
  CHECK(one.std_ms == 0);
  CHECK(one.p50_ms == 4);
  CHECK(std::isnan(one.p90_ms));  // the one batch is no percentile
  CHECK(std::isnan(one.p99_ms));
  CHECK(bench::summarize({}, 8).batches == 0);
}

TEST_CASE("time_batches: warm-up untimed, each timed batch between two clock readings") {
  // A fake clock: each batch advances it by the next duration (seconds).
  const std::vector<double> durations{5, 6, 0.001, 0.002, 0.004};
  double now = 100;
  size_t calls = 0;
  const auto batch = [&] { now += durations.at(calls++); };
  const auto ms = bench::time_batches(batch, 2, 3, torch::kCPU, [&] { return now; });
  CHECK(calls == 5);
  REQUIRE(ms.size() == 3);
  CHECK(ms[0] == doctest::Approx(1));
  CHECK(ms[1] == doctest::Approx(2));
  CHECK(ms[2] == doctest::Approx(4));
  CHECK(bench::time_batches(batch, 0, 0, torch::kCPU, [&] { return now; }).empty());
}

TEST_CASE("time_pipelined: n batches between two clock readings, the mean of them") {
  const std::vector<double> durations{0.001, 0.002, 0.006};
  double now = 100;
  size_t calls = 0, readings = 0;
  const auto batch = [&] { now += durations.at(calls++); };
  const auto clock = [&] {
    ++readings;
    return now;
  };
  CHECK(bench::time_pipelined(batch, 3, torch::kCPU, clock) == doctest::Approx(3));
  CHECK(calls == 3);
  CHECK(readings == 2);  // no reading, and so no wait for the device, between the batches
  CHECK(std::isnan(bench::time_pipelined(batch, 0, torch::kCPU, clock)));
}

TEST_CASE("PartTimer: records nothing while disabled, then each part from the last reading") {
  double now = 10;
  bench::PartTimer parts(torch::kCPU, [&] { return now; });
  parts.start();
  now += 1;
  parts.end("forward");  // disabled: warm-up
  CHECK(parts.ms().empty());
  parts.enable(true);
  for (int batch = 0; batch < 2; ++batch) {
    parts.start();
    now += 0.002;
    parts.end("forward");
    now += 0.003 + batch * 0.001;
    parts.end("backward");
  }
  parts.enable(false);
  parts.start();
  now += 1;
  parts.end("forward");
  REQUIRE(parts.ms().size() == 2);
  const auto& forward = parts.ms().at("forward");
  const auto& backward = parts.ms().at("backward");
  REQUIRE(forward.size() == 2);
  REQUIRE(backward.size() == 2);
  CHECK(forward[0] == doctest::Approx(2));
  CHECK(forward[1] == doctest::Approx(2));
  CHECK(backward[0] == doctest::Approx(3));
  CHECK(backward[1] == doctest::Approx(4));
}

TEST_CASE("run_point, training: the trainer's step changes the weights; the loss fits the model") {
  for (const bool log_probabilities : {true, false}) {
    auto model = tiny_model(log_probabilities);
    const auto before = model.module->parameters()[0].clone();
    const auto r = bench::run_point(model, tiny_options(bench::Phase::kTraining));
    CHECK(r.batch_ms.size() == 7);
    CHECK(r.summary.batches == 7);
    CHECK(r.summary.mean_ms > 0);
    CHECK(r.loss == (log_probabilities ? "NLLLoss" : "CrossEntropyLoss"));
    CHECK_FALSE(torch::equal(before, model.module->parameters()[0]));
    CHECK(model.module->is_training());
    CHECK(r.peak_resident_bytes > 0);
    CHECK(r.peak_device_bytes == 0);
    // forward, backward and optimizer of each timed batch (none of the warm-up ones), read
    // within the batch's own clock readings
    CHECK(r.part_ms.size() == 3);
    std::vector<double> sum(7, 0.0);
    for (const char* part : {"forward", "backward", "optimizer"}) {
      REQUIRE(r.part_ms.count(part) == 1);
      const auto& ms = r.part_ms.at(part);
      REQUIRE(ms.size() == 7);
      for (size_t i = 0; i < ms.size(); ++i) {
        CHECK(ms[i] >= 0);
        sum[i] += ms[i];
      }
    }
    for (size_t i = 0; i < sum.size(); ++i) CHECK(sum[i] <= r.batch_ms[i] + 1e-6);
  }
}

TEST_CASE("run_point, inference: forward only, evaluation mode, weights untouched") {
  auto model = tiny_model(true);
  int forwards = 0, in_evaluation = 0;
  const auto forward = model.forward;
  model.forward = [&, forward](const torch::Tensor& x) {
    ++forwards;
    if (!model.module->is_training() && c10::InferenceMode::is_enabled()) ++in_evaluation;
    return forward(x);
  };
  const auto before = model.module->parameters()[0].clone();
  const auto r = bench::run_point(model, tiny_options(bench::Phase::kInference));
  CHECK(r.batch_ms.size() == 7);
  CHECK(r.loss.empty());
  CHECK(torch::equal(before, model.module->parameters()[0]));
  CHECK(forwards == 9);  // 2 warm-up, 7 timed
  CHECK(in_evaluation == forwards);
  CHECK(model.module->is_training());  // the mode it had before
  CHECK(r.part_ms.empty());            // without a loader the forward pass is the whole batch
}

TEST_CASE("run_point refuses bad options, naming the flag") {
  auto model = tiny_model(true);
  auto o = tiny_options(bench::Phase::kTraining);
  o.batch_size = 0;
  CHECK_THROWS_WITH_AS(bench::run_point(model, o), "--batch_size must be positive, got 0",
                       core::UsageError);
  o = tiny_options(bench::Phase::kTraining);
  o.warmup_batches = -1;
  CHECK_THROWS_WITH_AS(bench::run_point(model, o), doctest::Contains("--num_warmup_batches"),
                       core::UsageError);
  o = tiny_options(bench::Phase::kTraining);
  o.precision = train::Precision::kFloat16;
  CHECK_THROWS_AS(bench::run_point(model, o), core::UsageError);
  CHECK_THROWS_WITH_AS(bench::parse_phase("train"), doctest::Contains("--phase"), core::UsageError);
}
