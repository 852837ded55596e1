// The sweep half of `engine bench`; bench.cpp runs one point and hands a script to it. A sweep
// runs each point through the point command in a child process, or in this process with
// --isolate none (run/bench_point.hpp).
#pragma once

#include <string>
#include <vector>

namespace engine::cli {

// engine bench SWEEP.lua [flags]
int bench_sweep(const std::vector<std::string>& args);

}  // namespace engine::cli
