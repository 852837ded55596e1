// engine info: what this build is made of and what it can use.
#include <ATen/Parallel.h>
#include <torch/cuda.h>

#include <cstdio>

#include "engine/cli/commands.hpp"
#include "engine/cli/common.hpp"
#include "engine/core/device.hpp"
#include "engine/core/gpu_facts.hpp"
#include "engine/core/memory.hpp"
#include "engine/core/threads.hpp"
#include "engine/core/version.hpp"
#include "engine/io/hdf5.hpp"

namespace engine::cli {
namespace {

// One line per CUDA device: its name, memory and the versions of the libraries under it.
void print_gpu_facts() {
  if (!torch::cuda::is_available()) return;
  for (size_t i = 0; i < torch::cuda::device_count(); ++i) {
    const torch::Device device(torch::kCUDA, static_cast<c10::DeviceIndex>(i));
    std::string line;
    for (const auto& [name, value] : core::gpu_facts(device)) {
      line += (line.empty() ? "" : ", ") + name + " " + value;
    }
    std::printf("%-8s %s\n", device.str().c_str(), line.c_str());
  }
}

}  // namespace

int info_command(const std::vector<std::string>& args) {
  cxxopts::Options options("engine info", "Print versions, threads, BLAS and devices.");
  options.add_options()("threads", "libtorch threads (0: all cores)",
                        cxxopts::value<int>()->default_value("0"))(
      "allocator", core::kAllocatorHelp, cxxopts::value<std::string>()->default_value("caching"))(
      "h,help", "show this help");
  auto flags = parse(options, args);
  if (flags.count("help")) {
    std::printf("%s\n", options.help().c_str());
    return 0;
  }
  const int threads = core::configure_threads(flags["threads"].as<int>());
  // Touch BLAS once so its library is mapped and can be named.
  (void)torch::mm(torch::ones({2, 2}), torch::ones({2, 2}));
  std::printf("engine   %s\n", core::engine_version().c_str());
  std::printf("libtorch %s\n", core::torch_version().c_str());
  std::printf("LuaJIT   %s\n", lua::luajit_version().c_str());
  std::printf("HDF5     %s\n", io::h5::library_version().c_str());
  std::printf("threads  %d (of %d cores)\n", threads, core::available_cores());
  std::printf("BLAS     %s\n", core::blas_in_use().c_str());
  std::printf("memory   %s allocator\n", core::allocator_name(core::allocator_in_use()));
  std::printf("devices  %s\n", core::available_devices().c_str());
  print_gpu_facts();
  const auto openmp = core::loaded_openmp_runtimes();
  std::printf("OpenMP   %s\n", core::loaded_openmp_runtimes_text().c_str());
  if (openmp.size() > 1) {
    std::printf(
        "         warning: %zu OpenMP runtimes in one process; their thread pools compete for "
        "the cores (docs/gpu.md, 'One OpenMP runtime')\n",
        openmp.size());
  }
  std::printf("home     %s\n", engine_home().c_str());
  return 0;
}

}  // namespace engine::cli
