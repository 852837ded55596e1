// What a process uses while it runs, sampled on a thread of its own (10 times a second by
// default, as DLBS's resource monitor at monitor.frequency 0.1): its CPU time as a share of
// one core (200 = two cores busy, as top shows it), its resident memory, and, for a CUDA device
// where NVML is there, the GPU's utilisation and memory in use.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/core/nvml.hpp"

namespace engine::core {

// Series of equal length, one entry per sample: seconds (since the monitor started),
// cpu_percent, resident_mb, and, where the GPU was read, gpu_percent and gpu_memory_mb.
using ResourceSeries = std::map<std::string, std::vector<double>>;

class ResourceMonitor {
 public:
  // Starts sampling. gpu_pci_bus_id: the CUDA device to read through NVML ("" for none).
  explicit ResourceMonitor(std::chrono::milliseconds interval = std::chrono::milliseconds(100),
                           const std::string& gpu_pci_bus_id = "",
                           const std::string& nvml_library = "libnvidia-ml.so.1");
  ~ResourceMonitor();
  ResourceMonitor(const ResourceMonitor&) = delete;
  ResourceMonitor& operator=(const ResourceMonitor&) = delete;
  // Takes a last sample, stops the thread and returns the series (at least one sample).
  ResourceSeries stop();
  // Samples taken so far (tests wait for this).
  size_t samples() const;

 private:
  void run();
  void sample();

  const std::chrono::milliseconds interval_;
  const std::string gpu_;
  std::unique_ptr<Nvml> nvml_;
  const std::chrono::steady_clock::time_point start_;
  double last_cpu_seconds_ = 0;
  std::chrono::steady_clock::time_point last_time_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  ResourceSeries series_;
  std::thread thread_;
};

// Mean of a series, and its largest value (NaN for an empty one).
double series_mean(const std::vector<double>& values);
// The CPU time of every thread of the process so far (user and system), in seconds.
double process_cpu_seconds();
double series_max(const std::vector<double>& values);

}  // namespace engine::core
