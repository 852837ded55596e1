#include <doctest/doctest.h>

#include "engine/core/errors.hpp"
#include "engine/train/metrics.hpp"
#include "engine/train/spec.hpp"

using namespace engine;

namespace {

// One-hot-ish scores whose argmax is `predicted`.
torch::Tensor scores_for(const std::vector<int64_t>& predicted, int64_t classes) {
  auto out = torch::zeros({static_cast<int64_t>(predicted.size()), classes});
  for (size_t i = 0; i < predicted.size(); ++i) out[static_cast<int64_t>(i)][predicted[i]] = 1;
  return out;
}

}  // namespace

TEST_CASE("precision, recall and F1 are macro averages over the classes seen") {
  // predicted 0 1 1 2 2 0, true 0 1 2 2 1 0: class 0 perfect; classes 1 and 2 one hit, one
  // false positive and one miss each; class 3 never appears and does not count.
  auto output = scores_for({0, 1, 1, 2, 2, 0}, 4);
  auto target = torch::tensor({0, 1, 2, 2, 1, 0}, torch::kInt64);
  train::MetricAccumulator acc({"precision", "recall", "f1", "accuracy"});
  acc.add(0.5, output, target);
  auto m = acc.averages();
  CHECK(m.at("precision") == doctest::Approx(2.0 / 3));
  CHECK(m.at("recall") == doctest::Approx(2.0 / 3));
  CHECK(m.at("f1") == doctest::Approx(2.0 / 3));
  CHECK(m.at("accuracy") == doctest::Approx(4.0 / 6));

  // split over two batches: counts add up, so the result is the same (not a mean of means)
  train::MetricAccumulator split({"f1"});
  split.add(0.5, output.narrow(0, 0, 2), target.narrow(0, 0, 2));
  split.add(0.5, output.narrow(0, 2, 4), target.narrow(0, 2, 4));
  CHECK(split.averages().at("f1") == doctest::Approx(2.0 / 3));

  // a class with predictions but no true samples: precision 0 for it, recall not defined (0)
  train::MetricAccumulator wrong({"precision", "recall", "f1"});
  wrong.add(0, scores_for({1, 1}, 2), torch::tensor({0, 0}, torch::kInt64));
  CHECK(wrong.averages().at("precision") == doctest::Approx(0.0));
  CHECK(wrong.averages().at("f1") == doctest::Approx(0.0));
}

TEST_CASE("mse and mae average over every element, weighted by batch size") {
  auto output = torch::tensor({{1.0f, 2.0f}, {3.0f, 4.0f}});
  auto target = torch::tensor({{1.0f, 0.0f}, {3.0f, 5.0f}});
  train::MetricAccumulator acc({"mse", "mae"});
  acc.add(0, output, target);
  CHECK(acc.averages().at("mse") == doctest::Approx((0 + 4 + 0 + 1) / 4.0));
  CHECK(acc.averages().at("mae") == doctest::Approx((0 + 2 + 0 + 1) / 4.0));
  acc.add(0, output.narrow(0, 0, 1), target.narrow(0, 0, 1));  // mse 2, mae 1 over 1 sample
  CHECK(acc.averages().at("mse") == doctest::Approx((1.25 * 2 + 2.0) / 3));
  CHECK_THROWS_WITH_AS(train::MetricAccumulator({"mse"}).add(0, output, torch::tensor({1, 0})),
                       doctest::Contains("needs targets shaped like the output"), core::UsageError);
}

TEST_CASE("metrics the script computes are averaged like the built-in ones") {
  train::CustomMetric first{
      "first", [](const torch::Tensor& o, const torch::Tensor&) { return o[0][0].item<double>(); }};
  train::MetricAccumulator acc({}, {first});
  acc.add(0, torch::tensor({{2.0f}, {9.0f}}), torch::tensor({0, 0}));  // 2, 2 samples
  acc.add(0, torch::tensor({{5.0f}}), torch::tensor({0}));             // 5, 1 sample
  CHECK(acc.averages().at("first") == doctest::Approx((2.0 * 2 + 5.0) / 3));
}

TEST_CASE("accuracy names the shapes it cannot use; unknown metric names list the known") {
  CHECK_THROWS_WITH_AS(train::accuracy(torch::zeros({4, 3}), torch::zeros({5}, torch::kInt64)),
                       doctest::Contains("got output 4x3 and target 5"), core::UsageError);
  CHECK_THROWS_WITH_AS(train::check_metric_name("f1score"),
                       doctest::Contains("precision, recall, f1"), core::UsageError);
}

TEST_CASE("watched metrics: split, name and direction") {
  auto g = train::parse_goal("validation.accuracy");
  CHECK(g.split == "validation");
  CHECK(g.name == "accuracy");
  CHECK(g.maximize);
  CHECK_FALSE(train::parse_goal("loss").maximize);
  CHECK(train::parse_goal("train.mse", "max").maximize);
  CHECK(train::parse_goal("validation.f1").better(0.5, 0.4));
  CHECK_FALSE(train::parse_goal("validation.loss").better(0.5, 0.4));
  CHECK_FALSE(train::parse_goal("validation.loss").better(0.39, 0.4, 0.05));  // not by min_delta
  CHECK(train::parse_goal("validation.loss").better(0.3, 0.4, 0.05));
  CHECK_THROWS_AS(train::parse_goal("test.loss"), core::UsageError);
  CHECK_THROWS_AS(train::parse_goal("validation.loss", "lowest"), core::UsageError);
}
