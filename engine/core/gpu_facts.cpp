#include "engine/core/gpu_facts.hpp"

#include <ATen/detail/CUDAHooksInterface.h>
#include <dlfcn.h>
#include <link.h>
#include <torch/cuda.h>

#include <algorithm>
#include <cstring>

// Defined by CMake for this file alone when the libtorch found has CUDA, as for
// core/device_memory.cpp (a definition on every file would make the shared PCH unusable).
#ifdef ENGINE_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime_api.h>
#endif

namespace engine::core {
namespace {

// NVML's driver version ("580.65.06", what nvidia-smi prints), read through the library the
// driver installs, so that nothing links it; empty when it is not there.
std::string nvml_driver_version() {
  void* nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!nvml) return {};
  using Init = int (*)();
  using Version = int (*)(char*, unsigned);
  auto init = reinterpret_cast<Init>(dlsym(nvml, "nvmlInit_v2"));
  auto version = reinterpret_cast<Version>(dlsym(nvml, "nvmlSystemGetDriverVersion"));
  auto shutdown = reinterpret_cast<Init>(dlsym(nvml, "nvmlShutdown"));
  std::string text;
  if (init && version && init() == 0) {
    char buffer[96] = {0};
    if (version(buffer, sizeof buffer) == 0) text = buffer;
    if (shutdown) shutdown();
  }
  dlclose(nvml);
  return text;
}

// NCCL's version when libtorch brought NCCL into the process (its CUDA builds link it).
std::string nccl_version() {
  using Version = int (*)(int*);
  auto version = reinterpret_cast<Version>(dlsym(RTLD_DEFAULT, "ncclGetVersion"));
  int code = 0;
  if (!version || version(&code) != 0) return "none";
  return nccl_version_text(code);
}

int add_openmp_runtime(struct dl_phdr_info* info, size_t, void* out) {
  const char* path = info->dlpi_name;
  if (!path || !*path) return 0;
  const char* slash = std::strrchr(path, '/');
  const std::string name = slash ? slash + 1 : path;
  // GNU's libgomp (also as a wheel's renamed libgomp-<hash>.so), Intel's libiomp5, LLVM's libomp
  const bool openmp = name.rfind("libgomp", 0) == 0 || name.rfind("libiomp", 0) == 0 ||
                      name.rfind("libomp.", 0) == 0 || name.rfind("libomp-", 0) == 0;
  if (openmp) static_cast<std::vector<std::string>*>(out)->push_back(name + " (" + path + ")");
  return 0;
}

}  // namespace

std::string cuda_version_text(int code) {
  return std::to_string(code / 1000) + "." + std::to_string(code % 1000 / 10);
}

std::string cudnn_version_text(long code) {
  // cuDNN 9 counts major * 10000 + minor * 100 + patch; cuDNN 8 and older major * 1000 + ...
  const long major_unit = code >= 90000 ? 10000 : 1000;
  return std::to_string(code / major_unit) + "." + std::to_string(code % major_unit / 100) + "." +
         std::to_string(code % 100);
}

std::string nccl_version_text(int code) {
  // NCCL 2.9 and later count major * 10000 + minor * 100 + patch; before, major * 1000 + ...
  const int major_unit = code >= 10000 ? 10000 : 1000;
  return std::to_string(code / major_unit) + "." + std::to_string(code % major_unit / 100) + "." +
         std::to_string(code % 100);
}

Facts gpu_facts(const c10::Device& device) {
  Facts facts;
  if (!device.is_cuda() || !torch::cuda::is_available()) return facts;
#ifdef ENGINE_WITH_CUDA
  const int index = device.has_index() ? device.index() : 0;
  const cudaDeviceProp* properties = at::cuda::getDeviceProperties(index);
  facts.emplace_back("gpu_name", properties->name);
  facts.emplace_back("gpu_memory_bytes", std::to_string(properties->totalGlobalMem));
  std::string driver = nvml_driver_version();
  int driver_cuda = 0;
  if (cudaDriverGetVersion(&driver_cuda) == cudaSuccess) {
    driver += (driver.empty() ? "CUDA " : " (CUDA ") + cuda_version_text(driver_cuda) +
              (driver.empty() ? "" : ")");
  }
  facts.emplace_back("gpu_driver", driver.empty() ? std::string("unknown") : driver);
  int runtime = 0;
  facts.emplace_back("cuda_runtime", cudaRuntimeGetVersion(&runtime) == cudaSuccess
                                         ? cuda_version_text(runtime)
                                         : std::string("unknown"));
#endif
  const auto& hooks = at::detail::getCUDAHooks();
  facts.emplace_back("cudnn", hooks.hasCuDNN() ? cudnn_version_text(hooks.versionCuDNN()) : "none");
  facts.emplace_back("nccl", nccl_version());
  return facts;
}

std::string gpu_pci_bus_id(const c10::Device& device) {
  if (!device.is_cuda() || !torch::cuda::is_available()) return {};
#ifdef ENGINE_WITH_CUDA
  char id[32] = {0};
  if (cudaDeviceGetPCIBusId(id, sizeof id, device.has_index() ? device.index() : 0) ==
      cudaSuccess) {
    return id;
  }
#endif
  return {};
}

std::vector<std::string> loaded_openmp_runtimes() {
  std::vector<std::string> runtimes;
  dl_iterate_phdr(add_openmp_runtime, &runtimes);
  std::sort(runtimes.begin(), runtimes.end());
  runtimes.erase(std::unique(runtimes.begin(), runtimes.end()), runtimes.end());
  return runtimes;
}

std::string loaded_openmp_runtimes_text() {
  std::string text;
  for (const auto& runtime : loaded_openmp_runtimes()) {
    text += (text.empty() ? "" : ", ") + runtime;
  }
  return text.empty() ? "none" : text;
}

}  // namespace engine::core
