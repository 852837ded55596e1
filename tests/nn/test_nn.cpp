#include <doctest/doctest.h>

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/container/any.h>
#include <torch/nn/modules/linear.h>

#include "engine/core/errors.hpp"
#include "engine/nn/describe.hpp"
#include "engine/nn/layer_error.hpp"
#include "engine/nn/loss.hpp"
#include "engine/nn/positions.hpp"
#include "engine/nn/sequential.hpp"

using namespace engine;
using torch::nn::AnyModule;

TEST_CASE("Sequential names its children 0, 1, ... as PyTorch does") {
  nn::Sequential seq;
  seq->push_back(AnyModule(torch::nn::Linear(4, 3)));
  seq->push_back(AnyModule(torch::nn::ReLU()));
  seq->push_back(AnyModule(torch::nn::Linear(3, 2)));
  std::vector<std::string> names;
  for (const auto& p : seq->named_parameters()) names.push_back(p.key());
  CHECK(names == std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"});
  CHECK(nn::count_parameters(*seq) == 4 * 3 + 3 + 3 * 2 + 2);
  CHECK(seq->forward(torch::randn({5, 4})).sizes().vec() == std::vector<int64_t>{5, 2});
}

TEST_CASE("a shape mismatch names the layer, its place and the input shape") {
  nn::Sequential inner;
  inner->push_back(AnyModule(torch::nn::Linear(10, 5)));
  inner->push_back(AnyModule(torch::nn::Linear(4, 2)));
  nn::Sequential outer;
  outer->push_back(AnyModule(torch::nn::Flatten()));
  outer->push_back(AnyModule(torch::nn::Linear(784, 10)));
  outer->push_back(AnyModule(inner.ptr()));
  try {
    outer->forward(torch::randn({3, 1, 28, 28}));
    FAIL("expected a LayerError");
  } catch (const nn::LayerError& e) {
    const std::string msg = e.what();
    CHECK(e.path() == "2.1");
    CHECK(msg.find("Linear(in_features=4, out_features=2") != std::string::npos);
    CHECK(msg.find("[3, 5]") != std::string::npos);
    CHECK(msg.find("3x5 and 4x2") != std::string::npos);
    CHECK(msg.find("torch::nn::") == std::string::npos);
  }
}

namespace {

// A layer whose forward runs out of memory, as an allocator does.
struct HungryImpl : torch::nn::Module {
  torch::Tensor forward(const torch::Tensor&) {
    C10_THROW_ERROR(OutOfMemoryError, "CPU: not enough memory: you tried to allocate 1 TiB");
  }
};
TORCH_MODULE(Hungry);

}  // namespace

TEST_CASE(
    "memory that runs out in a layer is out of memory (exit 7) naming it, not a shape error") {
  nn::Sequential seq;
  seq->push_back(AnyModule(torch::nn::Linear(4, 3)));
  seq->push_back(AnyModule(Hungry()));
  try {
    seq->forward(torch::randn({5, 4}));
    FAIL("expected core::OutOfMemory");
  } catch (const nn::LayerError& e) {
    FAIL("reported as a shape error: " << e.what());
  } catch (const core::OutOfMemory& e) {
    const std::string msg = e.what();
    CHECK(e.exit_code() == 7);
    CHECK(msg.find("out of memory in layer ") == 0);
    CHECK(msg.find("with an input of shape [5, 3]: CPU: not enough memory") != std::string::npos);
  }
}

TEST_CASE("the module tree shows names, layers and parameter counts") {
  nn::Sequential seq;
  seq->push_back(AnyModule(torch::nn::Linear(2, 2)));
  const auto tree = nn::describe_tree(*seq);
  CHECK(tree.find("Sequential  [6 params]") == 0);
  CHECK(tree.find("(0): Linear(in_features=2, out_features=2, bias=true)  [6 params]") !=
        std::string::npos);
}

TEST_CASE("losses match libtorch and reject bad targets with both shapes") {
  auto out = torch::log_softmax(torch::randn({4, 3}), 1);
  auto target = torch::tensor({0, 2, 1, 2}, torch::kInt64);
  nn::Loss nll(nn::Loss::Kind::kNll);
  CHECK(nll(out, target).item<double>() ==
        doctest::Approx(torch::nll_loss(out, target).item<double>()));
  nn::Loss ce(nn::Loss::Kind::kCrossEntropy);
  CHECK(ce(out, target).item<double>() ==
        doctest::Approx(torch::cross_entropy_loss(out, target).item<double>()));
  CHECK(nn::Loss(nn::Loss::Kind::kNll, nn::Reduction::kNone)(out, target).sizes().vec() ==
        std::vector<int64_t>{4});

  auto message = [&](const torch::Tensor& o, const torch::Tensor& t) -> std::string {
    try {
      nll.check_targets(o, t);
      nll(o, t);
    } catch (const core::ScriptError& e) {
      return e.what();
    }
    return "";
  };
  CHECK(message(out, torch::tensor({0, 3, 1, 2}, torch::kInt64))
            .find("class 4 is out of range 1..3") != std::string::npos);
  CHECK(message(out, torch::tensor({0, 1}, torch::kInt64)).find("target [2]") != std::string::npos);
  CHECK(message(out, torch::zeros({4})).find("int64") != std::string::npos);
}

TEST_CASE("positions: 1-based Lua positions and class targets to libtorch's 0-based, and back") {
  CHECK(nn::zero_based(torch::tensor({1, 3}), 3, "gather")
            .equal(torch::tensor({0, 2}, torch::kInt64)));
  CHECK((nn::zero_based(torch::tensor({2}, torch::kInt32), 2, "x").scalar_type() == torch::kInt64));
  CHECK(nn::zero_based(torch::empty({0}, torch::kInt64), 0, "x").numel() == 0);
  CHECK_THROWS_WITH_AS(nn::zero_based(torch::tensor({0, 1}), 3, "index_select"),
                       "index_select: index 0 is out of range 1..3", core::ScriptError);
  CHECK_THROWS_WITH_AS(nn::zero_based(torch::tensor({4}), 3, "Embedding"),
                       "Embedding: index 4 is out of range 1..3", core::ScriptError);
  CHECK_THROWS_WITH_AS(nn::zero_based(torch::tensor({1.0}), 3, "gather"),
                       doctest::Contains("gather: index must be an integer tensor"),
                       core::ScriptError);
  const auto classes = torch::tensor({0, 2}, torch::kInt64);
  CHECK(nn::one_based_classes(classes).equal(torch::tensor({1, 3}, torch::kInt64)));
  CHECK(nn::zero_based_classes(nn::one_based_classes(classes)).equal(classes));
  const auto values = torch::tensor({0.5, 1.5});
  CHECK(nn::one_based_classes(values).equal(values));  // regression targets pass
  CHECK_FALSE(nn::zero_based_classes(torch::Tensor()).defined());
}
