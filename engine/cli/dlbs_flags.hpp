// DLBS's experimenter flags on `engine bench SWEEP.lua`: -P name=value and -V name=[a,b]
// (attached, -Pexp.num_batches=100, as DLBS writes them, or apart), with DLBS's names
// (exp.replica_batch) or the engine's (batch_size) and JSON values; docs/benchmarks.md.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "engine/bench/sweep.hpp"

namespace engine::cli {

// "name=value" as DLBS's -P and -V give it: the name as written, the value as JSON or, where it
// is not JSON, its text. A UsageError names the flag for text without '=' or without a name.
std::pair<std::string, nlohmann::ordered_json> dlbs_assignment(const std::string& text,
                                                               const std::string& flag);

// The -P and -V assignments as overrides: names through DLBS's (exp.model is model), values
// read as JSON ('"resnet50"', 16, true, [8, 16]) or, where they are not JSON, as the text.
// A UsageError names an assignment without '=' and a -P whose value is a list.
// DLBS's names the engine has no use for (exp.framework, exp.docker_image, tensorflow.*) are
// left out and added to `not_used`, never refused; an exp.* or pytorch.* name DLBS does not
// have but one is near (exp.num_batchs) is a UsageError naming the nearest.
void add_dlbs_overrides(const std::vector<std::string>& params,
                        const std::vector<std::string>& variables, bench::Overrides& overrides,
                        std::vector<std::string>& not_used);

}  // namespace engine::cli
