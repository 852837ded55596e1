// FusedAdam and FusedAdamW: the multi-tensor step CUDA parameters take, run here on the CPU
// against libtorch's per-parameter Adam and AdamW.
#include <doctest/doctest.h>

#include "engine/train/adam.hpp"

using namespace engine;

namespace {

std::vector<torch::Tensor> adam_parameters() {
  torch::manual_seed(9);
  std::vector<torch::Tensor> params;
  for (const auto& shape : std::vector<std::vector<int64_t>>{{1}, {4, 6}, {1000}}) {
    params.push_back(torch::randn(shape).requires_grad_());
  }
  return params;
}

// Steps both with the same gradients; parameter 0 gets none at step 2, so its step count falls
// behind the others' (a group of its own in the multi-tensor path).
template <class Reference, class Fused, class Options>
void compare_adam(const Options& options) {
  auto expected = adam_parameters(), got = adam_parameters();
  Reference reference(expected, options);
  Fused fused(got, options);
  fused.set_multi_tensor_on_cpu(true);
  for (int step = 0; step < 4; ++step) {
    torch::manual_seed(50 + step);
    for (size_t i = 0; i < expected.size(); ++i) {
      const auto g = torch::randn(expected[i].sizes());
      const bool none = i == 0 && step == 2;
      expected[i].mutable_grad() = none ? torch::Tensor() : g.clone();
      got[i].mutable_grad() = none ? torch::Tensor() : g.clone();
    }
    reference.step();
    fused.step();
    for (size_t i = 0; i < expected.size(); ++i) {
      INFO("step " << step << ", parameter " << i);
      CHECK(torch::allclose(expected[i], got[i], 1e-6, 1e-7));
    }
  }
}

}  // namespace

TEST_CASE("FusedAdam's multi-tensor step is torch::optim::Adam's") {
  compare_adam<torch::optim::Adam, train::FusedAdam>(torch::optim::AdamOptions(0.01));
  compare_adam<torch::optim::Adam, train::FusedAdam>(
      torch::optim::AdamOptions(0.01).weight_decay(0.1).amsgrad(true));
}

TEST_CASE("FusedAdamW's multi-tensor step is torch::optim::AdamW's") {
  compare_adam<torch::optim::AdamW, train::FusedAdamW>(torch::optim::AdamWOptions(0.01));
  compare_adam<torch::optim::AdamW, train::FusedAdamW>(
      torch::optim::AdamWOptions(0.01).weight_decay(0.05).amsgrad(true));
}

TEST_CASE("on the CPU FusedAdam takes libtorch's own step, bit for bit") {
  auto expected = adam_parameters(), got = adam_parameters();
  torch::optim::Adam reference(expected, torch::optim::AdamOptions(0.01));
  train::FusedAdam fused(got, torch::optim::AdamOptions(0.01));
  for (int step = 0; step < 3; ++step) {
    for (size_t i = 0; i < expected.size(); ++i) {
      const auto g = torch::randn(expected[i].sizes());
      expected[i].mutable_grad() = g.clone();
      got[i].mutable_grad() = g.clone();
    }
    reference.step();
    fused.step();
  }
  for (size_t i = 0; i < expected.size(); ++i) CHECK(torch::equal(expected[i], got[i]));
}
