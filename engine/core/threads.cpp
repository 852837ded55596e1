#include "engine/core/threads.hpp"

#include <ATen/Parallel.h>
#include <sched.h>

#include <fstream>
#include <set>
#include <thread>

#include "engine/core/errors.hpp"

// libtorch's OpenMP runtime, when it has one. Weak so that builds without OpenMP still link;
// OpenMP's setting is per thread, unlike at::set_num_threads which changes the global count.
extern "C" void omp_set_num_threads(int) __attribute__((weak));

namespace engine::core {

int available_cores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  const unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? static_cast<int>(n) : 1;
}

int configure_threads(int requested) {
  if (requested < 0) throw UsageError("--threads must be 0 (all cores) or a positive number");
  const int n = requested == 0 ? available_cores() : requested;
  at::set_num_threads(n);
  return n;
}

void use_single_intraop_thread_here() {
  // libtorch sets this thread's OpenMP count to the global one at its first parallel op; run
  // that initialisation now so that it cannot undo the setting below later
  at::internal::lazy_init_num_threads();
  if (omp_set_num_threads) omp_set_num_threads(1);
}

std::string blas_in_use() {
  std::ifstream maps("/proc/self/maps");
  std::set<std::string> libraries;
  for (std::string line; std::getline(maps, line);) {
    const auto slash = line.find('/');
    if (slash == std::string::npos) continue;
    const std::string path = line.substr(slash);
    const auto name = path.substr(path.rfind('/') + 1);
    if (name.find("blas") != std::string::npos || name.find("mkl_core") != std::string::npos) {
      libraries.insert(path);
    }
  }
  std::string out;
  for (const auto& l : libraries) out += (out.empty() ? "" : ", ") + l;
  return out.empty() ? "unknown" : out;
}

}  // namespace engine::core
