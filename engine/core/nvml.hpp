// NVIDIA's management library (NVML), opened with dlopen from the library the driver installs
// (libnvidia-ml.so.1), so that nothing links it and a machine without a driver simply has none:
// a GPU's utilisation and memory in use, as nvidia-smi reads them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace engine::core {

struct GpuUse {
  double utilization_percent = 0;  // of the last sample period, as nvidia-smi's GPU-Util
  int64_t memory_used_bytes = 0;   // on the whole device, every process's
};

class Nvml {
 public:
  // The library opened and initialised, or null where it is missing or fails to start.
  static std::unique_ptr<Nvml> open(const std::string& library = "libnvidia-ml.so.1");
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;
  // The device at a PCI bus id ("00000000:3B:00.0", as CUDA names it): its use now, or nullopt
  // where NVML does not know the device or cannot read it.
  std::optional<GpuUse> use(const std::string& pci_bus_id) const;

 private:
  Nvml() = default;
  void* library_ = nullptr;
  int (*shutdown_)() = nullptr;
  int (*handle_by_bus_)(const char*, void**) = nullptr;
  int (*utilization_)(void*, void*) = nullptr;
  int (*memory_)(void*, void*) = nullptr;
};

}  // namespace engine::core
