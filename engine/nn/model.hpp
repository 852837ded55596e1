// What the trainer trains: a libtorch module and the function that runs it on a batch. The
// module may be built in C++ or defined in Lua; the trainer cannot tell the difference.
#pragma once

#include <torch/nn/module.h>

#include <functional>
#include <map>
#include <memory>
#include <string>

namespace engine::nn {

struct Model {
  std::shared_ptr<torch::nn::Module> module;
  std::function<torch::Tensor(const torch::Tensor&)> forward;
  // For batches of several inputs: forward on one table of them by name (input, categorical,
  // text...). Set for modules whose forward is written in Lua; empty for the others, which take
  // one tensor.
  std::function<torch::Tensor(const std::map<std::string, torch::Tensor>&)> forward_named;
  std::string name;  // for messages: the class or zoo id
  // A full collection of the Lua state whose code forward runs (a model written in Lua, or
  // with layers written in Lua): what Lua still holds of earlier steps goes now, before a CUDA
  // graph records the step. Empty for a model all in C++.
  std::function<void()> collect_garbage;
};

}  // namespace engine::nn
