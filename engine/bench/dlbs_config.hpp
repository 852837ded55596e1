// DLBS's JSON configs (what its experimenter takes with -c), planned as DLBS plans them: its
// default parameters under the file's, the file's parameters, variables crossed as a Cartesian
// product and extensions applied one after another (DLBS's Builder), then every parameter
// computed (DLBS's Processor): lists joined with spaces, ${name} references resolved (nested
// ones too, environment variables where no parameter has the name), $(...)$ evaluated as the
// Python expressions python_expression.hpp knows, and each value cast to its parameter's type.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace engine::bench {

using DlbsJson = nlohmann::ordered_json;  // key order kept, as Python's dicts keep it

struct DlbsRequest {
  std::string path;  // the config file, for messages
  DlbsJson config;   // its parameters, variables and extensions
  // DLBS's -P name=value, -V name=[values] and -E '{extension}', in the order given
  std::vector<std::pair<std::string, DlbsJson>> params, variables;
  std::vector<DlbsJson> extensions;
  // An environment variable's value (BENCH_ROOT in ${BENCH_ROOT}), or nothing.
  std::function<std::optional<std::string>(const std::string&)> environment;
};

// Every experiment of the config, each a flat object of every parameter (DLBS's defaults
// included) computed, in DLBS's order. A core::UsageError names the file and the parameter,
// variable or extension at fault: a config that is not DLBS's shape, a reference to a
// parameter nobody defines (an environment variable it would be: it says so), a cycle of
// references, an expression that does not evaluate, a value its parameter's type cannot take,
// a condition on a computed parameter.
std::vector<DlbsJson> plan_dlbs(const DlbsRequest& request);

// The names the request itself sets (the file's parameters, variables, extensions' parameters
// and cases, -P, -V, -E), DLBS's defaults aside.
std::set<std::string> dlbs_names_given(const DlbsRequest& request);

// A value as DLBS's ${...} writes it into text: Python's str() (True, 16, 0.5, a list's items
// joined by spaces where the Processor joined them first; an object as JSON).
std::string dlbs_text(const DlbsJson& value);

}  // namespace engine::bench
