// The engine's BatchNorm against libtorch's: the same numbers in training and evaluation, the
// same state names, PyTorch's printed form, and shape errors that say what was expected.
#include <doctest/doctest.h>

#include <torch/nn/modules/batchnorm.h>

#include <sstream>

#include "engine/nn/batchnorm.hpp"
#include "engine/nn/describe.hpp"
#include "engine/nn/layer_error.hpp"
#include "engine/nn/sequential.hpp"

using namespace engine;

namespace {

// Two training steps and an evaluation of both layers on the same inputs: outputs, input
// gradients, parameter gradients and running statistics agree.
template <class Reference>
void check_same_as(Reference reference, nn::BatchNormImpl& mine,
                   const std::vector<int64_t>& shape) {
  for (int step = 0; step < 2; ++step) {
    const auto x = torch::randn(shape) * 3 + 1;
    const auto a = x.clone().requires_grad_(), b = x.clone().requires_grad_();
    const auto weights = torch::randn(shape);
    const auto ya = reference->forward(a), yb = mine.forward(b);
    CHECK(torch::allclose(ya, yb, 1e-5, 1e-6));
    (ya * weights).sum().backward();
    (yb * weights).sum().backward();
    CHECK(torch::allclose(a.grad(), b.grad(), 1e-4, 1e-5));
  }
  CHECK(torch::allclose(reference->weight.grad(), mine.weight.grad(), 1e-4, 1e-5));
  CHECK(torch::allclose(reference->bias.grad(), mine.bias.grad(), 1e-4, 1e-5));
  CHECK(torch::allclose(reference->running_mean, mine.running_mean));
  CHECK(torch::allclose(reference->running_var, mine.running_var));
  CHECK(reference->num_batches_tracked.template item<int64_t>() ==
        mine.num_batches_tracked.item<int64_t>());
  reference->eval();
  mine.eval();
  const auto x = torch::randn(shape);
  CHECK(torch::allclose(reference->forward(x), mine.forward(x), 1e-5, 1e-6));
}

}  // namespace

TEST_CASE("BatchNorm1d, 2d and 3d compute what libtorch's modules compute") {
  torch::manual_seed(3);
  SUBCASE("1d") {
    nn::BatchNormImpl mine(nn::BatchNormKind::k1d, torch::nn::BatchNormOptions(5));
    check_same_as(torch::nn::BatchNorm1d(5), mine, {8, 5});
  }
  SUBCASE("2d, another momentum and eps") {
    const auto options = torch::nn::BatchNormOptions(3).momentum(0.3).eps(1e-3);
    nn::BatchNormImpl mine(nn::BatchNormKind::k2d, options);
    check_same_as(torch::nn::BatchNorm2d(options), mine, {4, 3, 5, 5});
  }
  SUBCASE("3d, cumulative average (momentum None)") {
    const auto options = torch::nn::BatchNormOptions(2).momentum(c10::nullopt);
    nn::BatchNormImpl mine(nn::BatchNormKind::k3d, options);
    check_same_as(torch::nn::BatchNorm3d(options), mine, {2, 2, 3, 3, 3});
  }
  SUBCASE("SyncBatchNorm on one process is BatchNorm, for any rank") {
    nn::BatchNormImpl mine(nn::BatchNormKind::kSync, torch::nn::BatchNormOptions(3));
    mine.synchronise({0, 1, [](torch::Tensor&) { FAIL("a world of one sums nothing"); }});
    check_same_as(torch::nn::BatchNorm2d(3), mine, {4, 3, 2, 2});
  }
}

TEST_CASE("BatchNorm keeps PyTorch's state names and printed form") {
  nn::BatchNorm bn(nn::BatchNormKind::k2d, torch::nn::BatchNormOptions(4));
  std::vector<std::string> names;
  for (const auto& p : bn->named_parameters()) names.push_back(p.key());
  for (const auto& b : bn->named_buffers()) names.push_back(b.key());
  CHECK(names == std::vector<std::string>{"weight", "bias", "running_mean", "running_var",
                                          "num_batches_tracked"});
  CHECK(nn::describe_layer(*bn) ==
        "BatchNorm2d(4, eps=1e-05, momentum=0.1, affine=true, track_running_stats=true)");
  nn::BatchNorm sync(nn::BatchNormKind::kSync,
                     torch::nn::BatchNormOptions(2).affine(false).track_running_stats(false));
  CHECK(nn::describe_layer(*sync) ==
        "SyncBatchNorm(2, eps=1e-05, momentum=0.1, affine=false, track_running_stats=false)");
  CHECK(sync->parameters().empty());
  auto copy = std::dynamic_pointer_cast<nn::BatchNormImpl>(bn->clone());
  REQUIRE(copy);
  CHECK(copy->kind() == nn::BatchNormKind::k2d);
}

TEST_CASE("BatchNorm's shape errors name the expected rank and channels") {
  const auto message = [](nn::BatchNormKind kind, const std::vector<int64_t>& shape) {
    nn::Sequential seq;
    seq->push_back(torch::nn::AnyModule(nn::BatchNorm(kind, torch::nn::BatchNormOptions(3))));
    try {
      seq->forward(torch::randn(shape));
    } catch (const nn::LayerError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message(nn::BatchNormKind::k2d, {2, 3, 4}).find("expected 4D input (got 3D input)") !=
        std::string::npos);
  CHECK(message(nn::BatchNormKind::k1d, {2, 3, 4, 4}).find("expected 2D or 3D input") !=
        std::string::npos);
  CHECK(message(nn::BatchNormKind::kSync, {3}).find("expected at least 2D input") !=
        std::string::npos);
  const auto channels = message(nn::BatchNormKind::k2d, {2, 5, 4, 4});
  CHECK(channels.find("expected 3 channels (dimension 2), got 5") != std::string::npos);
  CHECK(channels.find("[2, 5, 4, 4]") != std::string::npos);
}
