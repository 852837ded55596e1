#include <doctest/doctest.h>

#include <torch/optim/sgd.h>
#include <torch/serialize/archive.h>

#include <sstream>

#include "engine/train/sgd.hpp"

using namespace engine;

namespace {

// Sizes with vector tails and, past libtorch's grain (32768), chunks on both threads.
const std::vector<std::vector<int64_t>> kShapes = {{1}, {7}, {3, 11}, {257, 129}, {40003}};

std::vector<torch::Tensor> parameters(uint64_t seed) {
  torch::manual_seed(seed);
  std::vector<torch::Tensor> params;
  for (const auto& shape : kShapes) params.push_back(torch::randn(shape).requires_grad_());
  return params;
}

// The same gradients for both copies, including exact zeros and values around 1e-38
// (subnormal territory), which every rounding difference would show.
void set_gradients(std::vector<torch::Tensor>& params, uint64_t seed) {
  torch::manual_seed(seed);
  for (auto& p : params) {
    auto g = torch::randn(p.sizes()) * torch::rand(p.sizes()).pow(8);
    g.masked_fill_(torch::rand(p.sizes()) < 0.05, 0.0);
    g.index_put_({0}, 3e-38f);
    p.mutable_grad() = g;
  }
}

void check_identical(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("parameter " << i << " of shape " << a[i].sizes());
    CHECK(torch::equal(a[i], b[i]));
  }
}

void run_both(const torch::optim::SGDOptions& options, int steps, bool multi_tensor = false) {
  auto expected = parameters(1), got = parameters(1);
  torch::optim::SGD reference(expected, options);
  train::FusedSGD fused(got, options);
  fused.set_multi_tensor_on_cpu(multi_tensor);
  for (int step = 0; step < steps; ++step) {
    set_gradients(expected, 100 + step);
    set_gradients(got, 100 + step);
    reference.step();
    fused.step();
    check_identical(expected, got);
  }
}

}  // namespace

TEST_CASE("FusedSGD gives torch::optim::SGD's parameters bit for bit") {
  SUBCASE("plain") {
    run_both(torch::optim::SGDOptions(0.1), 3);
  }
  SUBCASE("momentum") {
    run_both(torch::optim::SGDOptions(0.01).momentum(0.9), 5);
  }
  SUBCASE("momentum, dampening, weight decay") {
    run_both(torch::optim::SGDOptions(0.05).momentum(0.8).dampening(0.1).weight_decay(1e-3), 5);
  }
  SUBCASE("nesterov with weight decay") {
    run_both(torch::optim::SGDOptions(0.02).momentum(0.9).nesterov(true).weight_decay(5e-4), 5);
  }
  SUBCASE("weight decay, no momentum") {
    run_both(torch::optim::SGDOptions(0.3).weight_decay(0.01), 3);
  }
}

TEST_CASE("FusedSGD leaves parameters it cannot fuse to libtorch's step") {
  auto options = torch::optim::SGDOptions(0.01).momentum(0.9);
  torch::manual_seed(3);
  auto make = [] {
    torch::manual_seed(3);
    return std::vector<torch::Tensor>{
        torch::randn({5, 4}).requires_grad_(),                   // fused
        torch::randn({5, 4}, torch::kFloat64).requires_grad_(),  // double: libtorch
        torch::randn({4, 6}).t().detach().requires_grad_()};     // not contiguous
  };
  auto expected = make(), got = make();
  torch::optim::SGD reference(expected, options);
  train::FusedSGD fused(got, options);
  for (int step = 0; step < 3; ++step) {
    for (size_t i = 0; i < expected.size(); ++i) {
      torch::manual_seed(10 + step + i);
      expected[i].mutable_grad() = torch::randn(expected[i].sizes(), expected[i].options());
      torch::manual_seed(10 + step + i);
      got[i].mutable_grad() = torch::randn(got[i].sizes(), got[i].options());
    }
    reference.step();
    fused.step();
    check_identical(expected, got);
    // gradients hidden from libtorch's step come back
    for (auto& p : got) CHECK(p.grad().defined());
  }
}

TEST_CASE("FusedSGD skips parameters without a gradient and keeps libtorch's state format") {
  auto options = torch::optim::SGDOptions(0.01).momentum(0.9);
  auto expected = parameters(2), got = parameters(2);
  torch::optim::SGD reference(expected, options);
  train::FusedSGD fused(got, options);
  set_gradients(expected, 7);
  set_gradients(got, 7);
  expected[1].mutable_grad().reset();
  got[1].mutable_grad().reset();
  reference.step();
  fused.step();
  check_identical(expected, got);
  CHECK(fused.state().size() == kShapes.size() - 1);

  // momentum buffers saved by FusedSGD load into libtorch's SGD, which goes on identically
  std::stringstream stream;
  {
    torch::serialize::OutputArchive out;
    fused.save(out);
    out.save_to(stream);
  }
  auto resumed_params = got;
  for (auto& p : resumed_params) p = p.detach().clone().requires_grad_();
  torch::optim::SGD resumed(resumed_params, options);
  torch::serialize::InputArchive in;
  in.load_from(stream);
  resumed.load(in);
  set_gradients(expected, 8);
  set_gradients(resumed_params, 8);
  reference.step();
  resumed.step();
  check_identical(expected, resumed_params);
}

TEST_CASE("release_gradients leaves every parameter without a gradient") {
  auto params = parameters(4);
  set_gradients(params, 5);
  torch::optim::SGD optimizer(params, torch::optim::SGDOptions(0.1));
  train::release_gradients(optimizer);
  for (const auto& p : params) CHECK_FALSE(p.grad().defined());
}

TEST_CASE("the multi-tensor path (CUDA's) takes torch::optim::SGD's steps on every parameter") {
  // ATen's _foreach_ kernels on the CPU run the same operations one tensor at a time: equal
  // bit for bit here; on CUDA their own kernels may round differently within float precision
  for (const bool nesterov : {false, true}) {
    CAPTURE(nesterov);
    run_both(torch::optim::SGDOptions(0.1), 2, true);
    run_both(torch::optim::SGDOptions(0.05).momentum(0.9).nesterov(nesterov), 4, true);
    run_both(torch::optim::SGDOptions(0.05).momentum(0.9).dampening(0.1).weight_decay(1e-3), 4,
             true);
    run_both(torch::optim::SGDOptions(0.05).momentum(0.9).weight_decay(1e-2).nesterov(nesterov), 3,
             true);
  }
}
