// The model run on a batch as the built-in steps do it: `input` alone, or, for batches that hold
// several inputs (a CSV's categorical columns, data.tensors / data.hdf5 `inputs`), all of them in
// one table by name for the model's forward.
#pragma once

#include <torch/types.h>

#include "engine/data/batch.hpp"
#include "engine/nn/model.hpp"

namespace engine::train {

// The model's output on the batch, its inputs moved to `device`; with channels_last, image
// batches (4-D inputs) laid out as N x H x W x C in memory (PyTorch's torch.channels_last), as
// a model converted by to_channels_last() wants them. ScriptError when the batch has several
// inputs and the model takes one tensor (a module not written in Lua).
torch::Tensor forward_batch(const nn::Model& model, const data::Batch& batch,
                            const torch::Device& device, bool channels_last = false);

// PyTorch's model.to(memory_format=torch.channels_last): the module's 4-D parameters and
// buffers (convolution weights) laid out channels last, in place, so that an optimizer holding
// them keeps them.
void to_channels_last(torch::nn::Module& module);

}  // namespace engine::train
