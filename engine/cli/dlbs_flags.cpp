#include "engine/cli/dlbs_flags.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "engine/bench/dlbs_defaults.hpp"
#include "engine/bench/dlbs_points.hpp"
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

bench::Value value_of(const nlohmann::ordered_json& json, const std::string& text,
                      const std::string& flag) {
  if (json.is_string()) return json.get<std::string>();
  if (json.is_boolean()) return json.get<bool>();
  if (json.is_number_integer()) return json.get<int64_t>();
  if (json.is_number()) return json.get<double>();
  throw core::UsageError(flag + " " + text + ": a value must be a string, a number or a boolean");
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

// DLBS's exp.gpus (a list, or a number) or exp.num_gpus as the engine's device, world_size
// and launcher (bench::dlbs_gpus).
bench::DlbsGpus gpu_choice(const std::string& name, const nlohmann::ordered_json& value,
                           const std::string& text) {
  if (name == "exp.num_gpus") {
    if (!value.is_number_integer() || value.get<int64_t>() < 0) {
      throw core::UsageError(text + ": exp.num_gpus takes a number of GPUs (0: the CPU)");
    }
    const int64_t n = value.get<int64_t>();
    return {n == 0 ? "cpu" : "cuda", std::max<int64_t>(n, 1), ""};
  }
  return bench::dlbs_gpus(value.is_string() ? value.get<std::string>() : value.dump(), text);
}

void add_gpu_param(const std::string& name, const nlohmann::ordered_json& value,
                   const std::string& text, bench::Overrides& overrides) {
  const bench::DlbsGpus choice = gpu_choice(name, value, text);
  overrides.dlbs_params.emplace_back("device", choice.device);
  overrides.dlbs_params.emplace_back("world_size", choice.world_size);
  if (!choice.launcher.empty()) overrides.dlbs_params.emplace_back("launcher", choice.launcher);
}

// A variable over GPU lists: a variable over world_size when only the count of GPUs changes.
void add_gpu_variable(const std::string& name, const nlohmann::ordered_json& values,
                      const std::string& text, bench::Overrides& overrides) {
  std::vector<bench::DlbsGpus> choices;
  for (const auto& v : values) choices.push_back(gpu_choice(name, v, text));
  std::vector<bench::Value> sizes;
  for (const auto& c : choices) {
    if (c.device != choices.front().device || c.launcher != choices.front().launcher) {
      throw core::UsageError("-V " + text +
                             ": its values change the device, not only the number of GPUs; a DLBS "
                             "config (engine bench CONFIG.json) plans such lists as DLBS does");
    }
    sizes.emplace_back(c.world_size);
  }
  overrides.dlbs_params.emplace_back("device", choices.front().device);
  if (!choices.front().launcher.empty()) {
    overrides.dlbs_params.emplace_back("launcher", choices.front().launcher);
  }
  overrides.dlbs_vars.emplace_back("world_size", std::move(sizes));
}

bool is_gpu_name(const std::string& name) {
  return name == "exp.gpus" || name == "exp.num_gpus";
}

}  // namespace

std::pair<std::string, nlohmann::ordered_json> dlbs_assignment(const std::string& text,
                                                               const std::string& flag) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw core::UsageError(flag + " takes name=value (DLBS's -Pexp.num_batches=100), got '" + text +
                           "'");
  }
  const std::string value = text.substr(eq + 1);
  try {
    return {text.substr(0, eq), nlohmann::ordered_json::parse(value)};
  } catch (const nlohmann::ordered_json::exception&) {
    return {text.substr(0, eq), value};  // -Pexp.model=vgg16: the text itself
  }
}

void add_dlbs_overrides(const std::vector<std::string>& params,
                        const std::vector<std::string>& variables, bench::Overrides& overrides,
                        std::vector<std::string>& not_used) {
  for (const auto& text : params) {
    const auto [written, json] = dlbs_assignment(text, "-P");
    const std::string name = engine_name(written);
    if (is_gpu_name(name) && !json.is_array()) {
      add_gpu_param(name, json, text, overrides);
      continue;
    }
    if (unused_dlbs_name(name, "-P", not_used)) continue;
    if (json.is_array()) {
      throw core::UsageError("-P " + text +
                             ": a parameter takes one value; a list of values is a variable, "
                             "-V" +
                             text);
    }
    overrides.dlbs_params.emplace_back(name, value_of(json, text, "-P"));
  }
  for (const auto& text : variables) {
    const auto [written, json] = dlbs_assignment(text, "-V");
    const std::string name = engine_name(written);
    if (is_gpu_name(name)) {
      add_gpu_variable(name, json.is_array() ? json : nlohmann::ordered_json::array({json}), text,
                       overrides);
      continue;
    }
    if (unused_dlbs_name(name, "-V", not_used)) continue;
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
