// memory_format = 'channels_last' on the CPU: the model's convolution weights and the image
// batches laid out channels last, the same training within float rounding (other kernels).
#include <doctest/doctest.h>

#include <torch/nn/modules/conv.h>
#include <torch/optim/sgd.h>

#include "engine/data/source.hpp"
#include "engine/nn/sequential.hpp"
#include "engine/train/batch_forward.hpp"
#include "engine/train/sgd.hpp"
#include "engine/train/trainer.hpp"
#include "tests/train/blob_spec.hpp"

using namespace engine;

namespace {

train::TrainSpec small_cnn_spec(bool channels_last) {
  torch::manual_seed(6);
  const int64_t n = 96;
  auto target = torch::arange(n, torch::kInt64) % 3;
  auto input = torch::randn({n, 2, 8, 8}) + target.view({n, 1, 1, 1}).to(torch::kFloat32);
  auto source = std::make_shared<data::TensorSource>(input, target, "images");
  nn::Sequential net;
  net->push_back(torch::nn::AnyModule(torch::nn::Conv2d(torch::nn::Conv2dOptions(2, 4, 3))));
  net->push_back(torch::nn::AnyModule(torch::nn::ReLU()));
  net->push_back(torch::nn::AnyModule(torch::nn::Flatten()));
  net->push_back(torch::nn::AnyModule(torch::nn::Linear(4 * 6 * 6, 3)));
  net->push_back(torch::nn::AnyModule(torch::nn::LogSoftmax(1)));
  train::TrainSpec spec;
  spec.name = "cnn";
  spec.seed = 6;
  spec.model =
      nn::Model{net.ptr(), [net](const torch::Tensor& x) mutable { return net->forward(x); }};
  spec.train_data = data::Pipeline(source).shuffle().batch(16);
  spec.validation_data = data::Pipeline(source).batch(48);
  spec.loss = std::make_shared<nn::Loss>(nn::Loss::Kind::kNll);
  spec.optimizer = std::make_shared<train::FusedSGD>(net->parameters(),
                                                     torch::optim::SGDOptions(0.05).momentum(0.9));
  spec.optimizer_name = "SGD";
  spec.metrics = {"accuracy"};
  spec.options.epochs = 3;
  spec.options.log_every = 2;
  spec.options.channels_last = channels_last;
  return spec;
}

}  // namespace

TEST_CASE("channels_last trains as the contiguous layout does, within float rounding") {
  auto contiguous = small_cnn_spec(false), last = small_cnn_spec(true);
  engine::test::Recorder a, b;
  train::Trainer(contiguous, {&a}).run();
  train::Trainer(last, {&b}).run();
  const auto weight = last.model.module->parameters()[0];
  CHECK(weight.dim() == 4);
  CHECK(weight.is_contiguous(torch::MemoryFormat::ChannelsLast));
  CHECK_FALSE(weight.is_contiguous());
  const auto sa = a.series(), sb = b.series();
  REQUIRE(sa.size() == sb.size());
  REQUIRE(sa.size() > 5);
  for (size_t i = 0; i < sa.size(); ++i) {
    CHECK(std::get<3>(sb[i]).at("loss") ==
          doctest::Approx(std::get<3>(sa[i]).at("loss")).epsilon(1e-4));
  }
  CHECK(torch::allclose(engine::test::all_weights(contiguous), engine::test::all_weights(last),
                        1e-4, 1e-5));
}

TEST_CASE("forward_batch lays image batches out channels last, other inputs as they are") {
  torch::Tensor seen;
  nn::Model model{nullptr, [&](const torch::Tensor& x) {
                    seen = x;
                    return x;
                  }};
  data::Batch images;
  images.input = torch::randn({2, 3, 4, 5});
  train::forward_batch(model, images, torch::kCPU, train::InputLayout{true, false});
  CHECK(seen.is_contiguous(torch::MemoryFormat::ChannelsLast));
  CHECK(torch::equal(seen, images.input));
  data::Batch rows;
  rows.input = torch::randn({2, 3});
  train::forward_batch(model, rows, torch::kCPU, train::InputLayout{true, false});
  CHECK(seen.is_contiguous());
}
