// One place that seeds every random number generator the engine uses.
#pragma once

#include <cstdint>

namespace engine::core {

// Seeds libtorch's default generators (CPU and, when present, CUDA).
void seed_everything(uint64_t seed);

// A seed derived from a run seed and a purpose (e.g. the shuffle of epoch 3), so that streams
// used for different things never coincide and never depend on each other's consumption.
uint64_t derive_seed(uint64_t seed, uint64_t stream, uint64_t index = 0);

// A small, fast generator (SplitMix64) for per-sample draws such as data augmentation: its whole
// state is one word, so every sample can have its own, seeded from (seed, epoch, sample index).
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next();
  double uniform();                         // in [0, 1)
  double uniform(double low, double high);  // in [low, high)
  int64_t below(int64_t n);                 // in [0, n), n >= 1

 private:
  uint64_t state_;
};

}  // namespace engine::core
