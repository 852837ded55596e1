#include <doctest/doctest.h>

#include <torch/optim/sgd.h>

#include "engine/core/errors.hpp"
#include "engine/data/source.hpp"
#include "engine/nn/sequential.hpp"
#include "engine/train/adadelta.hpp"
#include "engine/train/metrics.hpp"
#include "engine/train/trainer.hpp"
#include "tests/train/blob_spec.hpp"

using namespace engine;
using engine::test::blob_spec;
using engine::test::Recorder;

TEST_CASE("training lowers the loss and logs train and validation rows") {
  auto spec = blob_spec(7);
  Recorder rec;
  train::Trainer trainer(spec, {&rec});
  const double before = trainer.validate().at("loss");
  auto result = trainer.run();
  CHECK(result.steps == 4 * 8);
  CHECK(result.last_validation.at("loss") < before * 0.5);
  CHECK(result.last_validation.at("accuracy") > 0.9);
  CHECK(result.last_validation.at("top2") >= result.last_validation.at("accuracy"));
  REQUIRE(rec.epochs.size() == 4);
  std::vector<int64_t> train_steps, validation_steps, data_steps;
  for (const auto& r : rec.rows) {
    if (r.split == "data") {  // one row of loader figures per epoch
      data_steps.push_back(r.step);
      CHECK(r.values.at("skipped_records") == 0);
      CHECK(r.values.count("loader_wait_fraction"));
      continue;
    }
    (r.split == "train" ? train_steps : validation_steps).push_back(r.step);
    CHECK(r.values.count("loss"));
  }
  CHECK(validation_steps == std::vector<int64_t>{8, 16, 24, 32});
  CHECK(data_steps == std::vector<int64_t>{8, 16, 24, 32});
  // Every 3rd global step, plus the rest of the window at the end of each 8-step epoch.
  CHECK(train_steps == std::vector<int64_t>{3, 6, 8, 9, 12, 15, 16, 18, 21, 24, 27, 30, 32});
  CHECK(rec.rows.back().step == 32);
  CHECK(rec.rows.back().epoch == doctest::Approx(4.0));
}

TEST_CASE("a validation pipeline that yields no batch is refused, naming it") {
  auto spec = blob_spec(7);
  // fewer samples than a batch, the last one dropped: no batch at all
  auto three = std::make_shared<data::TensorSource>(torch::zeros({3, 8}),
                                                    torch::zeros({3}, torch::kInt64), "three");
  spec.validation_data = data::Pipeline(three).batch(100000, /*drop_last=*/true);
  Recorder rec;
  CHECK_THROWS_WITH_AS(train::Trainer(spec, {&rec}),
                       doctest::Contains("the 'validation' pipeline yields no batch ("),
                       core::DataError);
  CHECK_THROWS_WITH_AS(train::Trainer(spec, {&rec}), doctest::Contains("batch(100000, drop_last)"),
                       core::DataError);
}

TEST_CASE("same seed, same metric series") {
  auto run = [](uint64_t seed) {
    auto spec = blob_spec(seed);
    Recorder rec;
    train::Trainer(spec, {&rec}).run();
    std::vector<double> losses;
    for (const auto& r : rec.rows) {
      if (r.split != "data") losses.push_back(r.values.at("loss"));
    }
    return losses;
  };
  CHECK(run(3) == run(3));
  CHECK(run(3) != run(4));
}

TEST_CASE("a step budget stops mid-epoch and still validates") {
  auto spec = blob_spec(1);
  spec.options.steps = 5;
  Recorder rec;
  auto result = train::Trainer(spec, {&rec}).run();
  CHECK(result.steps == 5);
  const auto last = std::find_if(rec.rows.rbegin(), rec.rows.rend(),
                                 [](const train::MetricRow& r) { return r.split != "data"; });
  CHECK(last->split == "validation");
  CHECK(last->step == 5);
}

TEST_CASE("Adadelta follows PyTorch's update rule") {
  auto p = torch::tensor({1.0, -2.0}, torch::kFloat64).requires_grad_();
  train::Adadelta opt({p}, train::AdadeltaOptions(1.0).rho(0.9).eps(1e-6));
  const double rho = 0.9, eps = 1e-6;
  double square_avg[2] = {0, 0}, acc_delta[2] = {0, 0}, value[2] = {1.0, -2.0};
  for (int step = 0; step < 3; ++step) {
    opt.zero_grad();
    (p * p).sum().backward();  // gradient 2p
    opt.step();
    for (int i = 0; i < 2; ++i) {
      const double g = 2 * value[i];
      square_avg[i] = rho * square_avg[i] + (1 - rho) * g * g;
      const double delta = std::sqrt(acc_delta[i] + eps) / std::sqrt(square_avg[i] + eps) * g;
      acc_delta[i] = rho * acc_delta[i] + (1 - rho) * delta * delta;
      value[i] -= delta;
    }
  }
  CHECK(p[0].item<double>() == doctest::Approx(value[0]).epsilon(1e-12));
  CHECK(p[1].item<double>() == doctest::Approx(value[1]).epsilon(1e-12));
}

TEST_CASE("Adadelta's multi-tensor path (CUDA's) takes the per-parameter steps") {
  for (const double weight_decay : {0.0, 0.01}) {
    CAPTURE(weight_decay);
    torch::manual_seed(4);
    std::vector<torch::Tensor> one, all;
    for (const auto& shape : std::vector<std::vector<int64_t>>{{3}, {5, 7}, {300}}) {
      one.push_back(torch::randn(shape).requires_grad_());
      all.push_back(one.back().detach().clone().requires_grad_());
    }
    const auto options = train::AdadeltaOptions(1.0).rho(0.9).eps(1e-6).weight_decay(weight_decay);
    train::Adadelta by_parameter(one, options), together(all, options);
    together.set_multi_tensor_on_cpu(true);
    for (int step = 0; step < 4; ++step) {
      for (size_t i = 0; i < one.size(); ++i) {
        const auto g = torch::randn(one[i].sizes());
        one[i].mutable_grad() = g.clone();
        all[i].mutable_grad() = g.clone();
      }
      by_parameter.step();
      together.step();
    }
    for (size_t i = 0; i < one.size(); ++i) CHECK(torch::equal(one[i], all[i]));
  }
}

TEST_CASE("metrics: accuracy, top-k and unknown names") {
  auto out = torch::tensor({{0.1, 0.7, 0.2}, {0.5, 0.3, 0.2}});
  auto target = torch::tensor({1, 2}, torch::kInt64);
  CHECK(train::accuracy(out, target) == doctest::Approx(0.5));
  CHECK(train::topk_accuracy(out, target, 2) == doctest::Approx(0.5));
  CHECK(train::topk_accuracy(out, target, 3) == doctest::Approx(1.0));
  CHECK_THROWS_AS(train::check_metric_name("f1score"), core::UsageError);
  train::MetricAccumulator acc({"accuracy"});
  acc.add(1.0, out, target);
  acc.add(3.0, out.narrow(0, 0, 1), target.narrow(0, 0, 1));
  CHECK(acc.averages().at("loss") == doctest::Approx((1.0 * 2 + 3.0) / 3));
  CHECK(acc.averages().at("accuracy") == doctest::Approx(2.0 / 3));
}
