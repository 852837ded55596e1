// Readable descriptions of modules: PyTorch's names and a tree with parameter counts.
#pragma once

#include <torch/nn/module.h>

#include <string>

namespace engine::nn {

// "Linear(in_features=784, out_features=256, bias=true)": libtorch's own description without
// its C++ namespace.
std::string describe_layer(const torch::nn::Module& module);

// A multi-line tree of the module and its children, each line with its parameter count.
std::string describe_tree(const torch::nn::Module& module);

int64_t count_parameters(const torch::nn::Module& module, bool trainable_only = false);

}  // namespace engine::nn
