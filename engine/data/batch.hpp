// What a data pipeline hands to the trainer: one batch of inputs and class targets (0-based).
#pragma once

#include <torch/types.h>

#include <vector>

namespace engine::data {

struct Batch {
  torch::Tensor input;
  torch::Tensor target;       // class indices (int64, 0-based inside C++) or regression values
  torch::Tensor categorical;  // tabular sources: N x C category indices (int64, 0-based)
  // Inputs not stacked yet: sources whose samples differ in shape (decoded images) hand them
  // over one by one; per-sample transforms bring them to one shape and the loader stacks them.
  std::vector<torch::Tensor> samples;
  // Source indices of the samples present (int64): what per-sample random draws are seeded by.
  torch::Tensor indices;
  int64_t skipped = 0;  // bad records left out of this batch (skip_bad)
  // Samples of the epoch's order consumed once this batch is done: where a resumed epoch starts.
  int64_t position = 0;

  int64_t size() const {
    if (!samples.empty()) return static_cast<int64_t>(samples.size());
    return input.defined() ? input.size(0) : 0;
  }
};

}  // namespace engine::data
