// The time of one all-reduce of N floats over the processes of a world given by torchrun's
// variables, through engine::distributed::Group (c10d's Gloo on CPU): the communication a
// data-parallel step adds when nothing overlaps it. Run by scripts/perf/distributed.sh, one process
// per rank:
//   RANK=r WORLD_SIZE=2 MASTER_PORT=P perf_allreduce N [REPEATS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "engine/core/threads.hpp"
#include "engine/distributed/group.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: perf_allreduce FLOATS [REPEATS]\n");
    return 2;
  }
  const int64_t floats = std::atoll(argv[1]);
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 200;
  engine::core::configure_threads(1);
  auto world =
      engine::distributed::world_from_environment(engine::distributed::process_environment());
  engine::distributed::Group group(world, torch::kCPU);
  auto tensor = torch::ones({floats});
  std::vector<double> ms;
  for (int i = 0; i < repeats + 10; ++i) {
    group.barrier();
    const auto start = std::chrono::steady_clock::now();
    group.all_reduce(tensor);
    const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
    if (i >= 10) ms.push_back(took.count());
  }
  std::sort(ms.begin(), ms.end());
  if (group.leader()) {
    std::printf("all-reduce of %lld floats (%.2f MB) over %d processes: p50 %.3f ms, p90 %.3f ms\n",
                static_cast<long long>(floats), floats * 4 / 1e6, group.size(), ms[ms.size() / 2],
                ms[ms.size() * 9 / 10]);
  }
  return 0;
}
