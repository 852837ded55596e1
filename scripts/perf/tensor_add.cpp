// C++ side of scripts/perf/tensor_add.lua: N calls of a + b on 16-element tensors, libtorch
// directly. Built as build/bin/perf_tensor_add.
//   perf_tensor_add [N] [--engine-allocator]
// With --engine-allocator the loop runs on the engine's CPU allocator (core/memory.hpp), as the
// engine's Lua loop does, so the two differ only by the binding.
#include <torch/torch.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "engine/core/memory.hpp"

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 1000000;
  const bool engine_allocator = argc > 2 && !std::strcmp(argv[2], "--engine-allocator");
  if (engine_allocator) engine::core::configure_allocator(engine::core::AllocatorPolicy::kCaching);
  torch::set_num_threads(1);
  auto a = torch::ones({16}), b = torch::ones({16});
  for (int i = 0; i < 10000; ++i) (void)(a + b);
  const std::clock_t t0 = std::clock();
  for (long i = 0; i < n; ++i) (void)(a + b);
  const double seconds = static_cast<double>(std::clock() - t0) / CLOCKS_PER_SEC;
  std::printf("{\"impl\": \"%s\", \"calls\": %ld, \"ns_per_call\": %.1f}\n",
              engine_allocator ? "libtorch-cpp-engine-allocator" : "libtorch-cpp", n,
              seconds * 1e9 / n);
}
