// engine bench CONFIG.json: a DLBS JSON config (its experimenter's -c) read as it is, with
// DLBS's -P, -V and -E, planned by bench/dlbs_config.hpp into the engine's points.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "engine/bench/sweep.hpp"

namespace engine::cli {

bool is_dlbs_config(const std::string& path);  // a .json file

struct DlbsSweep {
  std::string name;  // the file's name without .json
  std::vector<bench::PlannedPoint> plan;
  std::set<std::string> not_used;  // names the config sets that the engine does not use
};

// -P name=value and -V name=[...] take JSON values (or, where a value is not JSON, its text), -E
// a JSON extension. A UsageError names the file (not JSON, not DLBS's shape: its line and
// column) or the flag at fault.
DlbsSweep plan_dlbs_config(const std::string& path, const std::vector<std::string>& params,
                           const std::vector<std::string>& variables,
                           const std::vector<std::string>& extensions);

}  // namespace engine::cli
