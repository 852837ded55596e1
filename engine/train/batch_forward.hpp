// The model run on a batch as the built-in steps do it: `input` alone, or, for batches that hold
// several inputs (a CSV's categorical columns, data.tensors / data.hdf5 `inputs`), all of them in
// one table by name for the model's forward.
#pragma once

#include <torch/types.h>

#include "engine/data/batch.hpp"
#include "engine/nn/model.hpp"
#include "engine/train/spec.hpp"

namespace engine::train {

// How the model wants its inputs beyond the device: image batches (4-D) laid out N x H x W x C
// (PyTorch's torch.channels_last, for a model converted by to_channels_last()), floating inputs
// in float16 (a float16 model: master weights).
struct InputLayout {
  bool channels_last = false;
  bool half = false;
};
// The layout the trainer's options ask for.
InputLayout input_layout(const TrainerOptions& options);

// The model's output on the batch, its inputs moved to `device` in `layout`. ScriptError when
// the batch has several inputs and the model takes one tensor (a module not written in Lua).
torch::Tensor forward_batch(const nn::Model& model, const data::Batch& batch,
                            const torch::Device& device, const InputLayout& layout = {});

// PyTorch's model.to(memory_format=torch.channels_last): the module's 4-D parameters and
// buffers (convolution weights) laid out channels last, in place, so that an optimizer holding
// them keeps them.
void to_channels_last(torch::nn::Module& module);

}  // namespace engine::train
