// One trial's `engine train` as a child process of the search: its output goes to the trial's
// log; like every child of the engine (core::ChildProcess) it has a process group of its own,
// so that Ctrl-C reaches the search alone, which stops each trial once.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/core/child_process.hpp"

namespace engine::search {

// Starts argv (argv[0] is the engine's path); IoError when it cannot.
std::unique_ptr<core::ChildProcess> start_trial(const std::vector<std::string>& argv,
                                                const std::string& log_path);

// The reason a failed trial gives: the last "error: ..." line of its log (else its last line).
std::string failure_reason(const std::string& log_path);

}  // namespace engine::search
