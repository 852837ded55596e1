// Everything a training run is made of, as read from a script: plain C++ values, no Lua.
#pragma once

#include <torch/optim/optimizer.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "engine/data/pipeline.hpp"
#include "engine/nn/loss.hpp"
#include "engine/nn/model.hpp"
#include "engine/train/scheduler.hpp"

namespace engine::train {

struct TrainerOptions {
  int64_t epochs = 1;                // used when steps is 0
  int64_t steps = 0;                 // total optimizer steps; 0: run `epochs` full epochs
  int64_t validate_every_steps = 0;  // 0: validate at the end of every epoch
  int64_t log_every = 50;            // steps between logged training-metric rows
};

struct TrainSpec {
  std::string name;
  uint64_t seed = 0;
  torch::Device device = torch::kCPU;
  nn::Model model;
  std::optional<data::Pipeline> train_data;
  std::optional<data::Pipeline> validation_data;
  std::shared_ptr<nn::Loss> loss;
  std::shared_ptr<torch::optim::Optimizer> optimizer;
  std::shared_ptr<Scheduler> scheduler;  // may be null
  std::vector<std::string> metrics;      // besides loss: "accuracy", "top5"...
  TrainerOptions options;
};

}  // namespace engine::train
