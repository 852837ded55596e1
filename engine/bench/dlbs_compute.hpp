// DLBS's Processor on one experiment of dlbs_config.hpp: every parameter computed in place.
#pragma once

#include <map>
#include <string>

#include "engine/bench/dlbs_config.hpp"

namespace engine::bench {

using DlbsTypes = std::map<std::string, std::string>;  // parameter -> str | int | float | bool

// Lists joined with spaces, ${name} replaced by the named parameter's computed text (or the
// environment variable's), $(...)$ evaluated, and a text cast to its parameter's type; DLBS's
// internal names (__dlbs_*) removed. A core::UsageError names the request's file and the
// parameter.
void compute_experiment(DlbsJson& experiment, const DlbsTypes& types, const DlbsRequest& request);

}  // namespace engine::bench
