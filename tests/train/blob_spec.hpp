// A small classification run shared by the trainer's tests: Gaussian blobs, a two-layer MLP.
#pragma once

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/container/any.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/adam.h>
#include <torch/optim/lbfgs.h>
#include <torch/optim/sgd.h>

#include "engine/data/source.hpp"
#include "engine/nn/batchnorm.hpp"
#include "engine/nn/sequential.hpp"
#include "engine/train/observer.hpp"
#include "engine/train/spec.hpp"

namespace engine::test {

struct Recorder : train::Observer {
  std::vector<train::MetricRow> rows;
  std::vector<train::EpochSummary> epochs;
  std::vector<std::string> checkpoints, removed;
  void on_metrics(const train::MetricRow& row) override { rows.push_back(row); }
  void on_epoch_end(const train::EpochSummary& s) override { epochs.push_back(s); }
  void on_checkpoint(const std::string& path, int64_t) override { checkpoints.push_back(path); }
  void on_checkpoint_removed(const std::string& path) override { removed.push_back(path); }
  // One value of every /metrics/data row (one an epoch), in order.
  std::vector<double> data_values(const std::string& name) const {
    std::vector<double> out;
    for (const auto& r : rows) {
      if (r.split == "data") out.push_back(r.values.at(name));
    }
    return out;
  }
  // The rows without their time column, which differs between runs.
  std::vector<std::tuple<std::string, int64_t, double, std::map<std::string, double>>> series()
      const {
    std::vector<std::tuple<std::string, int64_t, double, std::map<std::string, double>>> out;
    for (const auto& r : rows) {
      if (r.split == "data") continue;  // loader timings
      out.emplace_back(r.split, r.step, r.epoch, r.values);
    }
    return out;
  }
};

// Two separable Gaussian blobs per class: a problem a small MLP learns in a few epochs.
// dropout > 0 adds a Dropout layer (libtorch's generator); adam picks Adam over SGD;
// batchnorm adds a BatchNorm1d after the first layer.
inline train::TrainSpec blob_spec(uint64_t seed, double dropout = 0, bool adam = false,
                                  int64_t batch = 32, bool batchnorm = false) {
  torch::manual_seed(seed);
  const int64_t n = 256, classes = 4;
  auto target = torch::arange(n, torch::kInt64) % classes;
  auto centres = torch::randn({classes, 8}) * 3;
  auto input = centres.index_select(0, target) + torch::randn({n, 8});
  auto source = std::make_shared<data::TensorSource>(input, target, "blobs");

  nn::Sequential net;
  net->push_back(torch::nn::AnyModule(torch::nn::Linear(8, 16)));
  if (batchnorm) {
    net->push_back(torch::nn::AnyModule(
        nn::BatchNorm(nn::BatchNormKind::k1d, torch::nn::BatchNormOptions(16))));
  }
  net->push_back(torch::nn::AnyModule(torch::nn::ReLU()));
  if (dropout > 0) net->push_back(torch::nn::AnyModule(torch::nn::Dropout(dropout)));
  net->push_back(torch::nn::AnyModule(torch::nn::Linear(16, classes)));
  net->push_back(torch::nn::AnyModule(torch::nn::LogSoftmax(1)));

  train::TrainSpec spec;
  spec.name = "blobs";
  spec.seed = seed;
  spec.model =
      nn::Model{net.ptr(), [net](const torch::Tensor& x) mutable { return net->forward(x); }};
  spec.train_data = data::Pipeline(source).shuffle().batch(batch);
  spec.validation_data = data::Pipeline(source).batch(100);
  spec.loss = std::make_shared<nn::Loss>(nn::Loss::Kind::kNll);
  if (adam) {
    spec.optimizer =
        std::make_shared<torch::optim::Adam>(net->parameters(), torch::optim::AdamOptions(0.01));
    spec.optimizer_name = "Adam";
  } else {
    spec.optimizer = std::make_shared<torch::optim::SGD>(
        net->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));
    spec.optimizer_name = "SGD";
  }
  spec.metrics = {"accuracy", "top2"};
  spec.options.epochs = 4;
  spec.options.log_every = 3;
  return spec;
}

// The model's tensors, flattened and concatenated: equal weights, equal vectors.
inline torch::Tensor all_weights(const train::TrainSpec& spec) {
  std::vector<torch::Tensor> parts;
  for (const auto& p : spec.model.module->parameters()) parts.push_back(p.detach().reshape(-1));
  return torch::cat(parts);
}

}  // namespace engine::test
