#include "engine/core/nvml.hpp"

#include <dlfcn.h>

namespace engine::core {
namespace {

// NVML's structures, as its header (nvml.h) lays them out.
struct Utilization {
  unsigned int gpu, memory;
};
struct Memory {
  unsigned long long total, free, used;
};

template <typename Fn>
Fn symbol(void* library, const char* name) {
  return reinterpret_cast<Fn>(dlsym(library, name));
}

}  // namespace

std::unique_ptr<Nvml> Nvml::open(const std::string& library) {
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) return nullptr;
  std::unique_ptr<Nvml> nvml(new Nvml);
  nvml->library_ = handle;
  const auto init = symbol<int (*)()>(handle, "nvmlInit_v2");
  nvml->shutdown_ = symbol<int (*)()>(handle, "nvmlShutdown");
  nvml->handle_by_bus_ =
      symbol<int (*)(const char*, void**)>(handle, "nvmlDeviceGetHandleByPciBusId_v2");
  nvml->utilization_ = symbol<int (*)(void*, void*)>(handle, "nvmlDeviceGetUtilizationRates");
  nvml->memory_ = symbol<int (*)(void*, void*)>(handle, "nvmlDeviceGetMemoryInfo");
  if (!init || !nvml->handle_by_bus_ || !nvml->utilization_ || !nvml->memory_ || init() != 0) {
    nvml->shutdown_ = nullptr;  // not started: nothing to shut down
    return nullptr;
  }
  return nvml;
}

Nvml::~Nvml() {
  if (shutdown_) shutdown_();
  if (library_) dlclose(library_);
}

std::optional<GpuUse> Nvml::use(const std::string& pci_bus_id) const {
  void* device = nullptr;
  if (pci_bus_id.empty() || handle_by_bus_(pci_bus_id.c_str(), &device) != 0) return std::nullopt;
  Utilization utilization{};
  Memory memory{};
  if (utilization_(device, &utilization) != 0 || memory_(device, &memory) != 0) {
    return std::nullopt;
  }
  return GpuUse{static_cast<double>(utilization.gpu), static_cast<int64_t>(memory.used)};
}

}  // namespace engine::core
