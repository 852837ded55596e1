// An optimizer's state as libtorch's own archive, in bytes (a uint8 tensor): what checkpoints
// keep (checkpoint_optimizer.cpp) and what a script's opt:state_dict() hands out.
#pragma once

#include <torch/optim/optimizer.h>

namespace engine::train {

torch::Tensor optimizer_archive(torch::optim::Optimizer& optimizer);
// Restores the state saved by optimizer_archive; libtorch's errors (bytes that are not its
// archive, another optimizer's state) are thrown as they are, for the caller to name the source.
void load_optimizer_archive(torch::optim::Optimizer& optimizer, const torch::Tensor& bytes);

}  // namespace engine::train
