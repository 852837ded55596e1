#include "engine/core/resource_monitor.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <fstream>
#include <limits>

namespace engine::core {
namespace {

// The CPU time of every thread of the process so far (user and system), to the nanosecond:
// /proc's clock ticks (10 ms) would read a short point as idle.
double cpu_seconds() {
  return process_cpu_seconds();
}

double resident_mb() {
  std::ifstream in("/proc/self/statm");
  unsigned long long size = 0, resident = 0;
  in >> size >> resident;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1 << 20);
}

}  // namespace

double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

ResourceMonitor::ResourceMonitor(std::chrono::milliseconds interval,
                                 const std::string& gpu_pci_bus_id, const std::string& nvml_library)
    : interval_(interval),
      gpu_(gpu_pci_bus_id),
      nvml_(gpu_pci_bus_id.empty() ? nullptr : Nvml::open(nvml_library)),
      start_(std::chrono::steady_clock::now()),
      last_cpu_seconds_(cpu_seconds()),
      last_time_(start_) {
  thread_ = std::thread([this] { run(); });
}

ResourceMonitor::~ResourceMonitor() {
  if (thread_.joinable()) stop();
}

void ResourceMonitor::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, interval_, [this] { return stopping_; })) {
    lock.unlock();
    sample();
    lock.lock();
  }
}

void ResourceMonitor::sample() {
  const auto now = std::chrono::steady_clock::now();
  const double cpu = cpu_seconds();
  const double wall = std::chrono::duration<double>(now - last_time_).count();
  const double percent = wall > 0 ? 100.0 * (cpu - last_cpu_seconds_) / wall : 0.0;
  last_cpu_seconds_ = cpu;
  last_time_ = now;
  const double resident = resident_mb();
  const auto gpu = nvml_ ? nvml_->use(gpu_) : std::nullopt;
  std::lock_guard<std::mutex> guard(mutex_);
  series_["seconds"].push_back(std::chrono::duration<double>(now - start_).count());
  series_["cpu_percent"].push_back(std::max(0.0, percent));
  series_["resident_mb"].push_back(resident);
  if (gpu) {
    series_["gpu_percent"].push_back(gpu->utilization_percent);
    series_["gpu_memory_mb"].push_back(static_cast<double>(gpu->memory_used_bytes) / (1 << 20));
  }
}

ResourceSeries ResourceMonitor::stop() {
  {
    std::lock_guard<std::mutex> guard(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  sample();  // the last stretch, however short
  std::lock_guard<std::mutex> guard(mutex_);
  // a GPU read in some samples only (NVML failing in between) would not line up: dropped
  const size_t n = series_["seconds"].size();
  for (const char* name : {"gpu_percent", "gpu_memory_mb"}) {
    const auto it = series_.find(name);
    if (it != series_.end() && it->second.size() != n) series_.erase(it);
  }
  return series_;
}

size_t ResourceMonitor::samples() const {
  std::lock_guard<std::mutex> guard(mutex_);
  const auto it = series_.find("seconds");
  return it == series_.end() ? 0 : it->second.size();
}

double series_mean(const std::vector<double>& values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  double sum = 0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

double series_max(const std::vector<double>& values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  return *std::max_element(values.begin(), values.end());
}

}  // namespace engine::core
