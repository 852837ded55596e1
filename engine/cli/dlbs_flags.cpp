#include "engine/cli/dlbs_flags.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "engine/bench/dlbs_defaults.hpp"
#include "engine/bench/parameters.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/nearest_names.hpp"

namespace engine::cli {
namespace {

// DLBS's name of a parameter (exp.replica_batch) as the engine's (batch_size); other names as
// they are, for the sweep to accept or refuse.
std::string engine_name(const std::string& name) {
  for (const auto& parameter : bench::point_parameters()) {
    if (!parameter.dlbs.empty() && parameter.dlbs == name) return parameter.name;
  }
  return name;
}

bench::Value value_of(const nlohmann::json& json, const std::string& text,
                      const std::string& flag) {
  if (json.is_string()) return json.get<std::string>();
  if (json.is_boolean()) return json.get<bool>();
  if (json.is_number_integer()) return json.get<int64_t>();
  if (json.is_number()) return json.get<double>();
  throw core::UsageError(flag + " " + text + ": a value must be a string, a number or a boolean");
}

// The JSON of a value, or the text itself as a string where it is not JSON (-Pexp.model=vgg16).
nlohmann::json parsed(const std::string& text) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    return text;
  }
}

std::pair<std::string, std::string> assignment(const std::string& text, const std::string& flag) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw core::UsageError(flag + " takes name=value (DLBS's -Pexp.num_batches=100), got '" + text +
                           "'");
  }
  return {engine_name(text.substr(0, eq)), text.substr(eq + 1)};
}

// A DLBS name the engine does not use (true: leave it out), or a misspelt one (an error).
bool unused_dlbs_name(const std::string& name, const std::string& flag,
                      std::vector<std::string>& not_used) {
  if (bench::find_parameter(name)) return false;
  const bool dlbs_prefix = name.rfind("exp.", 0) == 0 || name.rfind("pytorch.", 0) == 0 ||
                           name.rfind("monitor.", 0) == 0 || name.rfind("runtime.", 0) == 0;
  if (!bench::is_dlbs_name(name)) {
    if (!dlbs_prefix) return false;  // the sweep names what it has
    const auto near = core::nearest_names(name, bench::dlbs_names(), 1);
    if (!near.empty()) {
      throw core::UsageError(flag + " " + name + ": DLBS has no such parameter; did you mean " +
                             near.front() + "?");
    }
  }
  if (std::find(not_used.begin(), not_used.end(), name) == not_used.end()) {
    not_used.push_back(name);
  }
  return true;
}

}  // namespace

void add_dlbs_overrides(const std::vector<std::string>& params,
                        const std::vector<std::string>& variables, bench::Overrides& overrides,
                        std::vector<std::string>& not_used) {
  for (const auto& text : params) {
    const auto [name, value] = assignment(text, "-P");
    if (unused_dlbs_name(name, "-P", not_used)) continue;
    const auto json = parsed(value);
    if (json.is_array()) {
      throw core::UsageError("-P " + text +
                             ": a parameter takes one value; a list of values is a variable, "
                             "-V" +
                             text);
    }
    overrides.dlbs_params.emplace_back(name, value_of(json, text, "-P"));
  }
  for (const auto& text : variables) {
    const auto [name, value] = assignment(text, "-V");
    if (unused_dlbs_name(name, "-V", not_used)) continue;
    const auto json = parsed(value);
    std::vector<bench::Value> values;
    if (json.is_array()) {
      for (const auto& item : json) values.push_back(value_of(item, text, "-V"));
    } else {
      values.push_back(value_of(json, text, "-V"));
    }
    overrides.dlbs_vars.emplace_back(name, std::move(values));
  }
}

}  // namespace engine::cli
