// What the trainer trains: a libtorch module and the function that runs it on a batch. The
// module may be built in C++ or defined in Lua; the trainer cannot tell the difference.
#pragma once

#include <torch/nn/module.h>

#include <functional>
#include <memory>

namespace engine::nn {

struct Model {
  std::shared_ptr<torch::nn::Module> module;
  std::function<torch::Tensor(const torch::Tensor&)> forward;
};

}  // namespace engine::nn
