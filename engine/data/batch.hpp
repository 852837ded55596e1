// What a data pipeline hands to the trainer: one batch of inputs and class targets (0-based).
#pragma once

#include <torch/types.h>

namespace engine::data {

struct Batch {
  torch::Tensor input;
  torch::Tensor target;  // class indices (int64, 0-based inside C++) or regression values

  int64_t size() const { return input.defined() ? input.size(0) : 0; }
};

}  // namespace engine::data
