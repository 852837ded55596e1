// Facts about the machine's accelerator and the native runtimes the engine loaded, for
// engine info, run files and benchmark files: what a result needs to be read and repeated.
#pragma once

#include <c10/core/Device.h>

#include <string>
#include <utility>
#include <vector>

namespace engine::core {

using Facts = std::vector<std::pair<std::string, std::string>>;

// For a CUDA device: gpu_name, gpu_memory_bytes, gpu_driver, cuda_runtime, cudnn and nccl (a
// version, or "none" where the library is not there), in that order. Empty for the CPU and in
// a build against a libtorch without CUDA.
Facts gpu_facts(const c10::Device& device);
// A CUDA device's PCI bus id ("0000:3B:00.0"), what NVML finds it by; "" for the CPU, a
// libtorch without CUDA, or a device CUDA cannot name.
std::string gpu_pci_bus_id(const c10::Device& device);

// The OpenMP runtimes mapped into this process, each as "name (path)": one where the engine
// links what libtorch links, two when a second copy came in beside libtorch's own.
std::vector<std::string> loaded_openmp_runtimes();
// The same joined by ", ", or "none", as files record it.
std::string loaded_openmp_runtimes_text();

// Version numbers as their libraries encode them, as people write them.
std::string cuda_version_text(int code);    // 13000 -> "13.0", 12040 -> "12.4"
std::string cudnn_version_text(long code);  // 91000 -> "9.10.0", 8906 -> "8.9.6"
std::string nccl_version_text(int code);    // 22703 -> "2.27.3", 2708 -> "2.7.8"

}  // namespace engine::core
