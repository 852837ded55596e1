// The model run on a batch as the built-in steps do it: `input` alone, or, for batches that hold
// several inputs (a CSV's categorical columns, data.tensors / data.hdf5 `inputs`), all of them in
// one table by name for the model's forward.
#pragma once

#include <torch/types.h>

#include "engine/data/batch.hpp"
#include "engine/nn/model.hpp"

namespace engine::train {

// The model's output on the batch, its inputs moved to `device`. ScriptError when the batch has
// several inputs and the model takes one tensor (a module not written in Lua).
torch::Tensor forward_batch(const nn::Model& model, const data::Batch& batch,
                            const torch::Device& device);

}  // namespace engine::train
