// Lua counts from 1, libtorch from 0. The one place that converts: index tensors (embedding
// rows, index_select, gather) and class targets, as scripts write them and as libtorch takes
// them. Used by the layers here and by every binding in engine/lua.
#pragma once

#include <torch/types.h>

#include <string>

namespace engine::nn {

// 1-based positions as 0-based int64 indices; ScriptError, prefixed by `what`, unless they are
// integers in 1..count.
torch::Tensor zero_based(const torch::Tensor& positions, int64_t count, const std::string& what);

// Class targets (int64) between Lua (1-based) and libtorch (0-based); any other target (float
// values for regression) passes as it is.
torch::Tensor one_based_classes(const torch::Tensor& target);
torch::Tensor zero_based_classes(const torch::Tensor& target);

}  // namespace engine::nn
