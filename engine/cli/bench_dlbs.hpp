// engine bench CONFIG.json: a DLBS JSON config (its experimenter's -c) read as it is, with
// DLBS's -P, -V and -E, planned by bench/dlbs_config.hpp into the engine's points.
#pragma once

#include <cstdio>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "engine/bench/sweep.hpp"
#include "engine/io/bench_file.hpp"

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

// For a plan with DLBS experiments: what writes each point's DLBS log, where its experiment's
// exp.log_file says (folders made), after the point ran; null when no point has a log file. A
// log that cannot be written is said on `out`, and the sweep goes on (its benchmark file has
// the results).
std::function<void(size_t, const io::BenchPoint&)> dlbs_log_writer(
    const std::vector<bench::PlannedPoint>& plan, const std::string& bench_file, std::FILE* out);

}  // namespace engine::cli
