// How long a run is, in optimizer steps, checked before it starts.
#pragma once

#include <cstdint>

#include "engine/train/spec.hpp"

namespace engine::train {

// The optimizer steps a run of `spec` takes: its trainer's steps, or its epochs times the steps
// an epoch of its train data makes. Throws UsageError where that passes core::kMaxCount, so a
// command can refuse such a run before it writes anything.
int64_t planned_steps(const TrainSpec& spec);

}  // namespace engine::train
