// core::ResourceMonitor: the process's CPU share and resident memory sampled on a thread of its
// own; NVML where the driver's library is, and nothing (no GPU series) where it is not.
#include <doctest/doctest.h>

#include <cmath>

#include "engine/core/nvml.hpp"
#include "engine/core/resource_monitor.hpp"

using namespace engine;

TEST_CASE("resource monitor: CPU share and resident memory, sample by sample") {
  core::ResourceMonitor monitor(std::chrono::milliseconds(5));
  // busy until the monitor has sampled the busy stretch a few times (an event, not a time)
  volatile double sink = 0;
  while (monitor.samples() < 4) {
    for (int i = 0; i < 100000; ++i) sink = sink + std::sqrt(static_cast<double>(i));
  }
  const auto series = monitor.stop();
  const auto& seconds = series.at("seconds");
  REQUIRE(seconds.size() >= 5);  // the last sample taken at stop
  CHECK(series.at("cpu_percent").size() == seconds.size());
  CHECK(series.at("resident_mb").size() == seconds.size());
  CHECK(series.count("gpu_percent") == 0);  // no GPU asked for
  for (size_t i = 1; i < seconds.size(); ++i) CHECK(seconds[i] >= seconds[i - 1]);
  CHECK(core::series_max(series.at("cpu_percent")) > 10);  // a core kept busy
  CHECK(core::series_mean(series.at("resident_mb")) > 1);
  CHECK(std::isnan(core::series_mean({})));
}

TEST_CASE("resource monitor: without NVML a GPU asked for gives no GPU series") {
  CHECK(core::Nvml::open("libengine-no-such-nvml.so") == nullptr);
  core::ResourceMonitor monitor(std::chrono::milliseconds(5), "00000000:3B:00.0",
                                "libengine-no-such-nvml.so");
  const auto series = monitor.stop();
  CHECK(series.at("seconds").size() >= 1);
  CHECK(series.count("gpu_percent") == 0);
  CHECK(series.count("gpu_memory_mb") == 0);
}
