// What the two halves of `engine bench` share: the sweep runs points through the point command
// (in a child process, or in this one with --isolate none).
#pragma once

#include <string>
#include <vector>

#include "engine/bench/value.hpp"
#include "engine/io/bench_file.hpp"

namespace engine::cli {

// engine bench SWEEP.lua [flags]
int bench_sweep(const std::vector<std::string>& args);

// Runs one point in this process; a failure comes back as a point with status failed.
io::BenchPoint run_point_in_process(const bench::Point& point);

}  // namespace engine::cli
