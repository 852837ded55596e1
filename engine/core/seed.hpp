// One place that seeds every random number generator the engine uses.
#pragma once

#include <cstdint>

namespace engine::core {

// Seeds libtorch's default generators (CPU and, when present, CUDA).
void seed_everything(uint64_t seed);

// A seed derived from a run seed and a purpose (e.g. the shuffle of epoch 3), so that streams
// used for different things never coincide and never depend on each other's consumption.
uint64_t derive_seed(uint64_t seed, uint64_t stream, uint64_t index = 0);

}  // namespace engine::core
