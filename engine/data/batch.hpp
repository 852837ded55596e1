// What a data pipeline hands to the trainer: one batch of inputs and class targets (0-based).
#pragma once

#include <torch/types.h>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace engine::data {

struct Batch {
  torch::Tensor input;
  torch::Tensor target;       // class indices (int64, 0-based inside C++) or regression values
  torch::Tensor categorical;  // tabular sources: N x C category indices (int64, 0-based)
  // Further inputs by name, beside `input` (a text beside an image): sources that hold several
  // (data.tensors and data.hdf5's `inputs`). Transforms apply to `input` only.
  std::map<std::string, torch::Tensor> inputs;
  // Inputs not stacked yet: sources whose samples differ in shape (decoded images) hand them
  // over one by one; per-sample transforms bring them to one shape and the loader stacks them.
  std::vector<torch::Tensor> samples;
  // Source indices of the samples present (int64): what per-sample random draws are seeded by.
  torch::Tensor indices;
  int64_t skipped = 0;  // bad records left out of this batch (skip_bad)
  // Bad records the epoch's reader left out up to this batch, with those of batches it dropped
  // whole before it: what the epoch has skipped once this batch is done.
  int64_t skipped_so_far = 0;
  // `input` holds image bytes (uint8) that x / 255 in float32 turns into what the source's
  // gather() gives: a quarter of the bytes to copy to a GPU, converted there (Source::
  // gather_bytes).
  bool scale_bytes = false;
  // Samples of the epoch's order consumed once this batch is done: where a resumed epoch starts.
  int64_t position = 0;
  // The smallest and largest class of an int64 target, read on the host before its copy to a
  // device (DevicePrefetcher, when asked): the class check then reads nothing back.
  std::optional<std::pair<int64_t, int64_t>> target_range;

  // Whether the model takes the batch as a table of named inputs rather than `input` alone.
  bool named() const { return categorical.defined() || !inputs.empty(); }
  // input, categorical and the further inputs by name (C++ conventions: 0-based categories).
  std::map<std::string, torch::Tensor> named_inputs() const {
    auto all = inputs;
    all["input"] = input;
    if (categorical.defined()) all["categorical"] = categorical;
    return all;
  }

  // Moves the inputs and the target to `device` (indices stay where they are).
  void move_to(const torch::Device& device) {
    for (auto* t : {&input, &target, &categorical}) {
      if (t->defined()) *t = t->to(device);
    }
    for (auto& [name, tensor] : inputs) tensor = tensor.to(device);
  }

  int64_t size() const {
    if (!samples.empty()) return static_cast<int64_t>(samples.size());
    return input.defined() ? input.size(0) : 0;
  }
};

}  // namespace engine::data
