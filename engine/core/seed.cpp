#include "engine/core/seed.hpp"

#include <torch/cuda.h>
#include <torch/utils.h>

namespace engine::core {
namespace {

// SplitMix64's finaliser: a cheap bijective mix with good avalanche.
uint64_t mix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

void seed_everything(uint64_t seed) {
  torch::manual_seed(seed);
  if (torch::cuda::is_available()) torch::cuda::manual_seed_all(seed);
}

uint64_t derive_seed(uint64_t seed, uint64_t stream, uint64_t index) {
  return mix(mix(mix(seed) ^ stream) ^ index);
}

uint64_t Rng::next() {
  const uint64_t z = mix(state_);
  state_ += 0x9e3779b97f4a7c15ULL;
  return z;
}

double Rng::uniform() {
  return static_cast<double>(next() >> 11) * 0x1.0p-53;
}

double Rng::uniform(double low, double high) {
  return low + (high - low) * uniform();
}

int64_t Rng::below(int64_t n) {
  // 128-bit multiply-shift (Lemire): unbiased enough for n far below 2^64
  return static_cast<int64_t>((static_cast<unsigned __int128>(next()) * static_cast<uint64_t>(n)) >>
                              64);
}

}  // namespace engine::core
