// Why a Lua inference loop must not leave its outputs to a slow collector, shown without Lua:
// the zoo mlp's forward pass at batch 64 (InferenceMode, 2 threads, the engine's allocator) in
// C++, keeping each step's output alive for the next KEEP steps, as dead tensors waiting for
// a collection are. Built as build/bin/perf_kept_outputs; scripts/perf/kept_outputs.sh
// alternates several KEEP values. Prints one JSON line like ../shared/bench's references.
//   perf_kept_outputs KEEP [STEPS] [MODE]
// MODE ring (default): each output dies KEEP steps later; collect: outputs pile up until there
// are KEEP of them, then all die at once, as a collector lets them (the first KEEP steps of a
// Lua loop).
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <string>
#include <vector>

#include "engine/core/memory.hpp"

namespace {

// The same layers as modules/mlp.lua and ../shared/bench/cpp_loop's MLP.
struct KeptMlpImpl : torch::nn::Module {
  torch::nn::Linear fc1{784, 256}, fc2{256, 256}, fc3{256, 10};
  KeptMlpImpl() {
    register_module("fc1", fc1);
    register_module("fc2", fc2);
    register_module("fc3", fc3);
  }
  torch::Tensor forward(const torch::Tensor& x) {
    return torch::log_softmax(fc3(torch::relu(fc2(torch::relu(fc1(x.flatten(1)))))), 1);
  }
};
TORCH_MODULE(KeptMlp);

}  // namespace

int main(int argc, char** argv) {
  const long keep = argc > 1 ? std::atol(argv[1]) : 0;
  const long steps = argc > 2 ? std::atol(argv[2]) : 2000;
  const std::string mode = argc > 3 ? argv[3] : "ring";
  if (keep < 0 || steps < 1 || (mode != "ring" && mode != "collect")) {
    std::fprintf(stderr,
                 "usage: perf_kept_outputs KEEP [STEPS] [ring|collect] (KEEP >= 0, STEPS >= 1)\n");
    return 2;
  }
  engine::core::configure_allocator(engine::core::AllocatorPolicy::kCaching);
  torch::set_num_threads(2);
  torch::manual_seed(0);
  KeptMlp model;
  model->eval();
  const auto x = torch::randn({64, 1, 28, 28});
  std::deque<torch::Tensor> kept;
  std::vector<double> ms;
  const long warmup = 100;
  for (long i = 0; i < warmup + steps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    {
      c10::InferenceMode inference;
      auto output = model(x);
      if (keep > 0) {
        kept.push_back(std::move(output));
        if (static_cast<long>(kept.size()) > keep) {
          if (mode == "ring") {
            kept.pop_front();
          } else {
            kept.clear();
          }
        }
      }
    }
    const auto t1 = std::chrono::steady_clock::now();
    if (i >= warmup) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  std::printf(
      "{\"impl\": \"cpp-kept-outputs\", \"keep\": %ld, \"mode\": \"%s\", \"steps\": %ld, "
      "\"p50_ms\": %.4f}\n",
      keep, mode.c_str(), steps, ms[ms.size() / 2]);
}
