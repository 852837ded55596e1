// Changing a module's floating-point type as PyTorch's Module.to(dtype) does.
#pragma once

#include <torch/nn/module.h>

namespace engine::nn {

// Converts the module's floating-point parameters and buffers (its children's too) to dtype and
// leaves the others alone: a boolean mask or BatchNorm's step count keeps its type, as in
// PyTorch. libtorch's C++ Module::to(dtype) converts every tensor.
void to_floating_dtype(torch::nn::Module& module, torch::Dtype dtype);

}  // namespace engine::nn
