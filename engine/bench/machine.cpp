#include "engine/bench/machine.hpp"

#include <ATen/ATen.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "engine/core/device.hpp"
#include "engine/core/gpu_facts.hpp"
#include "engine/core/threads.hpp"
#include "engine/core/version.hpp"

namespace engine::bench {
namespace {

// The value of the first "key : value" line of a /proc file whose key is `key`.
std::string proc_field(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.pop_back();
    if (name != key) continue;
    std::string value = line.substr(colon + 1);
    const auto first = value.find_first_not_of(" \t");
    return first == std::string::npos ? std::string() : value.substr(first);
  }
  return {};
}

int64_t kib_field(const std::string& key) {
  std::istringstream in(proc_field("/proc/meminfo", key));
  int64_t kib = 0;
  in >> kib;
  return kib * 1024;
}

}  // namespace

std::map<std::string, Value> machine_description() {
  (void)at::mm(at::ones({2, 2}), at::ones({2, 2}));  // maps the BLAS library, so it can be named
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  std::map<std::string, Value> description = {
      {"cpu_model", proc_field("/proc/cpuinfo", "model name")},
      {"cpu_cores", static_cast<int64_t>(core::available_cores())},
      {"blas", core::blas_in_use()},
      {"torch_version", core::torch_version()},
      {"engine_version", core::engine_version()},
      {"hostname", std::string(host)},
      {"devices", core::available_devices()},
      {"memory_bytes", kib_field("MemTotal")}};
  description["openmp_runtime"] = core::loaded_openmp_runtimes_text();
  // the first GPU's facts: a sweep's points run on GPUs of one kind
  for (const auto& [name, value] : core::gpu_facts(c10::Device(c10::kCUDA, 0))) {
    description[name] = value;
  }
  return description;
}

std::map<std::string, Value> machine_state() {
  std::map<std::string, Value> state;
  std::ifstream governor("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
  std::string name;
  state["cpu_governor"] = (governor >> name) ? name : std::string("unknown");
  std::ifstream load("/proc/loadavg");
  double one = 0, five = 0, fifteen = 0;
  if (load >> one >> five >> fifteen) {
    state["load_average_1m"] = one;
    state["load_average_5m"] = five;
    state["load_average_15m"] = fifteen;
  }
  state["available_memory_bytes"] = kib_field("MemAvailable");
  return state;
}

}  // namespace engine::bench
