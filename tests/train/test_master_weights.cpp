// Master weights (DLBS's float16: a low-precision model, float32 copies stepped) on the CPU
// with bfloat16 as the low precision; on a GPU it is float16 (--dtype float16_master).
#include <doctest/doctest.h>

#include <torch/nn/functional/loss.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/sgd.h>

#include "engine/nn/batchnorm.hpp"
#include "engine/nn/sequential.hpp"
#include "engine/train/master_weights.hpp"
#include "engine/train/sgd.hpp"

using namespace engine;

namespace {

nn::Sequential small_net() {
  torch::manual_seed(13);
  nn::Sequential net;
  net->push_back(torch::nn::AnyModule(torch::nn::Linear(6, 8)));
  net->push_back(
      torch::nn::AnyModule(nn::BatchNorm(nn::BatchNormKind::k1d, torch::nn::BatchNormOptions(8))));
  net->push_back(torch::nn::AnyModule(torch::nn::ReLU()));
  net->push_back(torch::nn::AnyModule(torch::nn::Linear(8, 3)));
  return net;
}

}  // namespace

TEST_CASE("master weights: a low-precision model, float32 masters stepped, BatchNorm kept") {
  auto net = small_net(), reference = small_net();
  torch::optim::SGD optimizer(net->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  torch::optim::SGD reference_optimizer(reference->parameters(),
                                        torch::optim::SGDOptions(0.1).momentum(0.9));
  const auto before = net->parameters();
  train::MasterWeights master(*net.ptr(), optimizer, torch::kBFloat16);
  for (const auto& item : net->named_parameters()) {
    const std::string name = item.key();
    CAPTURE(name);
    const bool batchnorm = name.rfind("1.", 0) == 0;
    CHECK((item.value().scalar_type() == (batchnorm ? torch::kFloat32 : torch::kBFloat16)));
  }
  const auto stepped = master.optimizer_parameters();
  REQUIRE(stepped.size() == before.size());
  for (const auto& p : stepped) CHECK((p.scalar_type() == torch::kFloat32));
  CHECK_FALSE(stepped[0].is_same(net->parameters()[0]));  // a master in the model's place
  CHECK(stepped[2].is_same(net->parameters()[2]));        // BatchNorm's weight: the same tensor

  torch::manual_seed(2);
  for (int step = 0; step < 3; ++step) {
    const auto x = torch::randn({16, 6});
    const auto y = torch::randint(0, 3, {16});
    torch::nn::functional::cross_entropy(net->forward(x.to(torch::kBFloat16)).to(torch::kFloat32),
                                         y)
        .backward();
    master.gradients_to_masters();
    optimizer.step();
    master.masters_to_model();
    train::release_gradients(optimizer);  // as the trainer does after a step
    master.release_model_gradients();
    torch::nn::functional::cross_entropy(reference->forward(x), y).backward();
    reference_optimizer.step();
    reference_optimizer.zero_grad();
  }
  const auto model = net->parameters();
  const auto expected = reference->parameters();
  for (size_t i = 0; i < model.size(); ++i) {
    CAPTURE(i);
    // the model holds the masters rounded to its precision
    CHECK(torch::equal(model[i], stepped[i].to(model[i].scalar_type())));
    CHECK_FALSE(model[i].grad().defined());
    // and the training follows float32's within bfloat16's rounding
    CHECK(torch::allclose(stepped[i], expected[i], 0.05, 0.02));
  }
}
