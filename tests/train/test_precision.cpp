#include <doctest/doctest.h>

#include <ATen/autocast_mode.h>
#include <torch/nn/modules/linear.h>

#include "engine/core/errors.hpp"
#include "engine/train/precision.hpp"

using namespace engine;

TEST_CASE("bfloat16 autocast on CPU runs a linear layer in bfloat16 and restores the state") {
  torch::nn::Linear layer(4, 3);
  auto x = torch::randn({2, 4});
  CHECK((layer->forward(x).scalar_type() == torch::kFloat32));
  {
    train::AutocastScope scope(train::Precision::kBFloat16, torch::kCPU);
    CHECK(at::autocast::is_cpu_enabled());
    CHECK((layer->forward(x).scalar_type() == torch::kBFloat16));
    {
      train::AutocastScope off(train::Precision::kFloat32, torch::kCPU);  // as backward does
      CHECK((layer->forward(x).scalar_type() == torch::kFloat32));
    }
    CHECK((layer->forward(x).scalar_type() == torch::kBFloat16));
  }
  CHECK_FALSE(at::autocast::is_cpu_enabled());
  CHECK((layer->forward(x).scalar_type() == torch::kFloat32));
}

TEST_CASE("float16 is refused on CPU with a message that says what to use") {
  CHECK_THROWS_WITH_AS(train::check_precision(train::Precision::kFloat16, torch::kCPU),
                       doctest::Contains("use 'bfloat16'"), core::UsageError);
  CHECK_NOTHROW(train::check_precision(train::Precision::kBFloat16, torch::kCPU));
  CHECK_THROWS_AS(train::parse_precision("fp8"), core::UsageError);
}

TEST_CASE("the gradient scaler unscales, skips non-finite steps and adapts its scale") {
  train::GradScaler scaler(1024.0, 2.0, 0.5, 2);
  auto p = torch::ones({3}).requires_grad_();
  scaler.scale((p * 2).sum()).backward();  // gradient 2 * 1024
  CHECK(p.grad()[0].item<double>() == doctest::Approx(2048.0));
  CHECK(scaler.unscale({p}));
  CHECK(p.grad()[0].item<double>() == doctest::Approx(2.0));
  scaler.update(true);
  CHECK(scaler.current_scale() == 1024.0);
  scaler.update(true);  // second good step in a row: grows
  CHECK(scaler.current_scale() == 2048.0);
  p.mutable_grad().fill_(std::numeric_limits<float>::infinity());
  CHECK_FALSE(scaler.unscale({p}));
  scaler.update(false);
  CHECK(scaler.current_scale() == 1024.0);
  CHECK(scaler.growth_tracker() == 0);

  train::GradScaler near_limit(3e38, 2.0, 0.5, 1);  // doubling would leave float32's range
  near_limit.update(true);
  CHECK(near_limit.current_scale() == 3e38);
  CHECK(near_limit.growth_tracker() == 0);
}

TEST_CASE("the gradient scaler's settings are checked as PyTorch's GradScaler checks them") {
  CHECK_THROWS_WITH_AS(train::GradScaler(0), doctest::Contains("init_scale must be a positive"),
                       core::UsageError);
  CHECK_THROWS_WITH_AS(train::GradScaler(1024, 1.0), doctest::Contains("growth_factor must be > 1"),
                       core::UsageError);
  CHECK_THROWS_WITH_AS(train::GradScaler(1024, 2.0, 1.5), doctest::Contains("backoff_factor"),
                       core::UsageError);
  CHECK_THROWS_WITH_AS(train::GradScaler(1024, 2.0, 0.5, 0),
                       doctest::Contains("growth_interval must be >= 1"), core::UsageError);
}
