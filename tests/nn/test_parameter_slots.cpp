// A layer's own parameters and buffers by name, replaced (weight tying), and counted once.
#include <doctest/doctest.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/rnn.h>

#include "engine/core/errors.hpp"
#include "engine/nn/batchnorm.hpp"
#include "engine/nn/describe.hpp"
#include "engine/nn/parameter_slots.hpp"

using namespace engine;

namespace {

struct Tied : torch::nn::Module {
  Tied() {
    encoder = register_module("encoder", torch::nn::Embedding(10, 4));
    decoder = register_module("decoder", torch::nn::Linear(4, 10));
  }
  torch::nn::Embedding encoder{nullptr};
  torch::nn::Linear decoder{nullptr};
};

}  // namespace

TEST_CASE("a layer's own slots: parameters, an empty bias, buffers") {
  torch::nn::Linear lin(torch::nn::LinearOptions(3, 2).bias(false));
  REQUIRE(nn::own_parameter(*lin, "weight"));
  CHECK(nn::own_parameter(*lin, "weight")->is_same(lin->weight));
  REQUIRE(nn::own_parameter(*lin, "bias"));
  CHECK_FALSE(nn::own_parameter(*lin, "bias")->defined());  // PyTorch's None
  CHECK_FALSE(nn::own_parameter(*lin, "scale"));
  nn::BatchNorm bn(nn::BatchNormKind::k1d, torch::nn::BatchNormOptions(3));
  REQUIRE(nn::own_buffer(*bn, "running_mean"));
  CHECK(nn::own_buffer(*bn, "running_mean")->is_same(bn->running_mean));
  CHECK(nn::own_tensor_names(*bn) == std::vector<std::string>{"weight", "bias", "running_mean",
                                                              "running_var",
                                                              "num_batches_tracked"});
}

TEST_CASE("weight tying: one tensor in both layers, read by forward, counted once") {
  Tied net;
  nn::replace_own_tensor(*net.decoder, "weight", net.encoder->weight);
  CHECK(net.decoder->weight.is_same(net.encoder->weight));
  CHECK(net.decoder->named_parameters()["weight"].is_same(net.encoder->weight));
  CHECK(net.parameters().size() == 3);  // libtorch lists the tied weight twice
  const auto unique = nn::unique_named_parameters(net);
  REQUIRE(unique.size() == 2);
  CHECK(unique[0].first == "encoder.weight");
  CHECK(unique[1].first == "decoder.bias");
  CHECK(nn::count_parameters(net) == 10 * 4 + 10);
  // forward reads the shared tensor: a change through one layer is seen by the other
  {
    torch::NoGradGuard no_grad;
    net.encoder->weight.fill_(0.5);
  }
  auto out = net.decoder->forward(torch::ones({1, 4}));
  CHECK(out.sub(net.decoder->bias).allclose(torch::full({1, 10}, 2.0)));
}

TEST_CASE("replacing: an empty bias, a recurrent layer's weight, and the errors") {
  torch::nn::Linear lin(3, 2);
  nn::replace_own_tensor(*lin, "bias", torch::Tensor());
  CHECK_FALSE(lin->bias.defined());
  CHECK(lin->forward(torch::zeros({1, 3})).abs().sum().item<double>() == 0);
  torch::nn::LSTM lstm(torch::nn::LSTMOptions(2, 3));
  auto w = torch::zeros_like(lstm->named_parameters()["weight_ih_l0"]).requires_grad_();
  nn::replace_own_tensor(*lstm, "weight_ih_l0", w);
  CHECK(lstm->all_weights()[0].is_same(w));  // what forward reads
  CHECK_THROWS_WITH_AS(
      nn::replace_own_tensor(*lin, "scale", w),
      doctest::Contains("has no parameter or buffer 'scale' (it has: weight, bias)"),
      core::UsageError);
  nn::BatchNorm bn(nn::BatchNormKind::k1d, torch::nn::BatchNormOptions(3));
  nn::replace_own_tensor(*bn, "running_mean", torch::full({3}, 2.0));
  CHECK(bn->running_mean.eq(2).all().item<bool>());
}
