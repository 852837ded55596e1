#include "engine/nn/convert.hpp"

namespace engine::nn {

void to_floating_dtype(torch::nn::Module& module, torch::Dtype dtype) {
  torch::NoGradGuard no_grad;
  // set_data keeps each tensor object (and what holds it: optimizers, Lua values) and swaps its
  // storage, as libtorch's own Module::to does
  for (auto& parameter : module.parameters(/*recurse=*/true)) {
    if (parameter.is_floating_point()) parameter.set_data(parameter.to(dtype));
  }
  for (auto& buffer : module.buffers(/*recurse=*/true)) {
    if (buffer.is_floating_point()) buffer.set_data(buffer.to(dtype));
  }
}

}  // namespace engine::nn
