// C++ side of scripts/perf/tensor_add.lua: N calls of a + b on 16-element tensors, libtorch
// directly. Built as build/bin/perf_tensor_add.
#include <torch/torch.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 1000000;
  torch::set_num_threads(1);
  auto a = torch::ones({16}), b = torch::ones({16});
  for (int i = 0; i < 10000; ++i) (void)(a + b);
  const std::clock_t t0 = std::clock();
  for (long i = 0; i < n; ++i) (void)(a + b);
  const double seconds = static_cast<double>(std::clock() - t0) / CLOCKS_PER_SEC;
  std::printf("{\"impl\": \"libtorch-cpp\", \"calls\": %ld, \"ns_per_call\": %.1f}\n", n, seconds * 1e9 / n);
}
