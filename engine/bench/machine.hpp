// What a benchmark figure depends on besides the point: the machine (stored once per file) and
// its state when a point ran (stored with the point).
#pragma once

#include <map>
#include <string>

#include "engine/bench/value.hpp"

namespace engine::bench {

// cpu_model, cpu_cores, blas, torch_version, engine_version, hostname, devices, memory_bytes.
std::map<std::string, Value> machine_description();

// cpu_governor (where readable), load_average_1m/5m/15m, available_memory_bytes.
std::map<std::string, Value> machine_state();

}  // namespace engine::bench
