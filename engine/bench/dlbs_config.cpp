#include "engine/bench/dlbs_config.hpp"

#include <algorithm>

#include <cctype>
#include <map>
#include <set>

#include "engine/bench/dlbs_compute.hpp"
#include "engine/bench/dlbs_defaults.hpp"
#include "engine/bench/python_expression.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/regex.hpp"

namespace engine::bench {
namespace {

// A value as DLBS holds it before its Processor: a config's value, or a dictionary with `val`
// (and `type`) as DLBS's own configs declare parameters.
void add_parameter(DlbsJson& parameters, DlbsTypes& types, const std::string& name,
                   const DlbsJson& value, bool typed_by_value) {
  if (value.is_object()) {
    if (!value.contains("val")) {
      throw core::UsageError("parameter '" + name +
                             "' is an object without 'val' (DLBS's declaration: {\"val\": ..., "
                             "\"type\": ...})");
    }
    parameters[name] = value["val"];
    if (value.contains("type") && value["type"].is_string()) types[name] = value["type"];
    return;
  }
  parameters[name] = value;
  if (typed_by_value && !types.count(name)) {
    types[name] = value.is_boolean()          ? "bool"
                  : value.is_number_integer() ? "int"
                  : value.is_number()         ? "float"
                                              : "str";
  }
}

// A condition's test of an experiment's value, as DLBS's DictUtils.match (policy 'relaxed'):
// a key the experiment lacks matches; a list or a non-string is a set of values; '' is
// equality; any other string a regular expression matched from the value's start, whose
// groups become <key>_1, ... (and the value <key>_0) for ${__condition.<key>_<n>}.
bool matches(const DlbsJson& experiment, const DlbsJson& condition, DlbsJson& groups,
             const std::string& where) {
  for (const auto& [key, wanted] : condition.items()) {
    if (!experiment.contains(key)) continue;
    const DlbsJson& value = experiment[key];
    if (wanted.is_array() || !wanted.is_string()) {
      const DlbsJson values = wanted.is_array() ? wanted : DlbsJson::array({wanted});
      // Python's ==: 1 == 1.0 and True == 1
      auto number = [](const DlbsJson& j) {
        return j.is_boolean() ? (j.get<bool>() ? 1.0 : 0.0) : j.get<double>();
      };
      auto numeric = [](const DlbsJson& j) { return j.is_number() || j.is_boolean(); };
      bool found = false;
      for (const auto& v : values) {
        found = found || v == value || (numeric(v) && numeric(value) && number(v) == number(value));
      }
      if (!found) return false;
      groups[key + "_0"] = value;
      continue;
    }
    const std::string pattern = wanted.get<std::string>();
    if (pattern.empty()) {
      if (!(value.is_string() && value.get<std::string>().empty())) return false;
      groups[key + "_0"] = value;
      continue;
    }
    if (!value.is_string()) {
      throw core::UsageError(where + ": condition on '" + key + "' is a regular expression, but " +
                             key + " is " + dlbs_text(value) + ", not a string");
    }
    std::optional<core::RegexMatch> m;
    try {
      m = core::Regex(pattern).match_start(value.get<std::string>());
    } catch (const core::RegexError& e) {
      throw core::UsageError(where + ": condition on '" + key + "': '" + pattern +
                             "' is not a regular expression (" + e.what() + ")");
    }
    if (!m) return false;
    groups[key + "_0"] = value;
    for (size_t i = 1; i < m->groups.size(); ++i)
      groups[key + "_" + std::to_string(i)] = m->groups[i];
  }
  return true;
}

bool is_constant(const DlbsJson& value) {
  if (!value.is_string()) return true;
  const std::string text = value.get<std::string>();
  const auto open = text.find("$(");
  return text.find("${") == std::string::npos &&
         !(open != std::string::npos && open > 0 && text.find(")$", open + 2) != std::string::npos);
}

// An extension's parameters with ${__condition.x} pointing at this application's groups.
DlbsJson with_groups(const DlbsJson& parameters, const std::string& session) {
  DlbsJson out = parameters;
  auto fix = [&](DlbsJson& v) {
    if (!v.is_string()) return;
    std::string text = v.get<std::string>();
    for (size_t at = 0; (at = text.find("${__condition.", at)) != std::string::npos;) {
      text.replace(at, 14, "${" + session);
      at += session.size() + 2;
    }
    v = text;
  };
  for (auto& [_, value] : out.items()) {
    if (value.is_array()) {
      for (auto& item : value) fix(item);
    } else {
      fix(value);
    }
  }
  return out;
}

// DLBS's Builder.apply_extensions: each extension in turn on every experiment so far.
std::vector<DlbsJson> apply_extensions(const DlbsJson& base, const DlbsJson& extensions,
                                       const std::string& path) {
  std::vector<DlbsJson> experiments{base};
  int64_t counter = 0;
  for (size_t e = 0; e < extensions.size(); ++e) {
    const DlbsJson& extension = extensions[e];
    const std::string where = path + ": extensions[" + std::to_string(e) + "]";
    const DlbsJson condition = extension.value("condition", DlbsJson::object());
    const DlbsJson parameters = extension.value("parameters", DlbsJson::object());
    const DlbsJson cases = extension.value("cases", DlbsJson::array());
    std::vector<DlbsJson> next;
    for (const auto& experiment : experiments) {
      for (const auto& [key, _] : condition.items()) {
        if (experiment.contains(key) && !is_constant(experiment[key])) {
          throw core::UsageError(where +
                                 ": a condition must not use a parameter that is not a "
                                 "constant (" +
                                 key + " = " + dlbs_text(experiment[key]) + ")");
        }
      }
      DlbsJson groups = DlbsJson::object();
      if (!matches(experiment, condition, groups, where)) {
        next.push_back(experiment);
        continue;
      }
      const std::string session = "__dlbs_" + std::to_string(counter++) + "_";
      DlbsJson extended = experiment;
      for (const auto& [key, value] : groups.items()) extended[session + key] = value;
      extended.update(with_groups(parameters, session));
      if (cases.empty()) {
        next.push_back(extended);
        continue;
      }
      for (const auto& c : cases) {
        DlbsJson one = extended;
        one.update(with_groups(c, session));
        next.push_back(one);
      }
    }
    experiments = std::move(next);
  }
  return experiments;
}

// An extension as DLBS takes one: {"condition": {...}, "parameters": {...}, "cases": [{...}]},
// each part optional; `index` counts the file's extensions from 1 (then -E's).
void check_extension(const DlbsJson& extension, size_t index, const std::string& path) {
  const std::string where = path + ": extensions[" + std::to_string(index) + "]";
  if (!extension.is_object()) {
    throw core::UsageError(where + " is not an object (condition, parameters, cases)");
  }
  for (const auto& [key, value] : extension.items()) {
    const bool object = key == "condition" || key == "parameters";
    if (!object && key != "cases") {
      throw core::UsageError(where + " has '" + key +
                             "'; an extension has condition, parameters and cases");
    }
    if (object && !value.is_object()) {
      throw core::UsageError(where + "'s " + key + " is " + value.dump() + ", not an object");
    }
    if (key == "cases") {
      bool objects = value.is_array();
      for (const auto& c : value) objects = objects && c.is_object();
      if (!objects) {
        throw core::UsageError(where + "'s cases are " + value.dump() +
                               ", not a list of objects (each one's parameters)");
      }
    }
  }
}

}  // namespace

std::string dlbs_text(const DlbsJson& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean()) return value.get<bool>() ? "True" : "False";
  if (value.is_null()) return "None";
  if (value.is_number_integer()) return std::to_string(value.get<int64_t>());
  if (value.is_number()) return python_str(PyValue(value.get<double>()));
  if (value.is_array()) {
    std::string out = "[";
    for (size_t i = 0; i < value.size(); ++i) {
      out += (i ? ", " : "") +
             (value[i].is_string() ? "'" + dlbs_text(value[i]) + "'" : dlbs_text(value[i]));
    }
    return out + "]";
  }
  return value.dump();
}

std::set<std::string> dlbs_names_given(const DlbsRequest& request) {
  std::set<std::string> names;
  auto add_keys = [&](const DlbsJson& object) {
    if (!object.is_object()) return;
    for (const auto& [name, _] : object.items()) names.insert(name);
  };
  auto add_extension = [&](const DlbsJson& extension) {
    if (!extension.is_object()) return;
    add_keys(extension.value("parameters", DlbsJson::object()));
    for (const auto& c : extension.value("cases", DlbsJson::array())) add_keys(c);
  };
  if (request.config.is_object()) {
    add_keys(request.config.value("parameters", DlbsJson::object()));
    add_keys(request.config.value("variables", DlbsJson::object()));
    for (const auto& e : request.config.value("extensions", DlbsJson::array())) add_extension(e);
  }
  for (const auto& [name, _] : request.params) names.insert(name);
  for (const auto& [name, _] : request.variables) names.insert(name);
  for (const auto& e : request.extensions) add_extension(e);
  return names;
}

std::vector<DlbsJson> plan_dlbs(const DlbsRequest& request) {
  const DlbsJson& config = request.config;
  if (!config.is_object()) {
    throw core::UsageError(request.path +
                           ": a DLBS config is a JSON object with parameters, "
                           "variables and extensions");
  }
  for (const auto& [key, value] : config.items()) {
    const bool known = (key == "parameters" || key == "variables") ? value.is_object()
                       : key == "extensions"                       ? value.is_array()
                                                                   : false;
    if (!known) {
      throw core::UsageError(request.path + ": '" + key +
                             "' is not a section of a DLBS config "
                             "(parameters: an object, variables: an object, extensions: a list)");
    }
  }
  DlbsTypes types;
  DlbsJson parameters = DlbsJson::object();
  for (const auto& d : dlbs_defaults()) {
    parameters[d.name] = DlbsJson::parse(d.value_json);
    types[d.name] = d.type;
  }
  const DlbsJson file_parameters = config.value("parameters", DlbsJson::object());
  for (const auto& [name, value] : file_parameters.items()) {
    add_parameter(parameters, types, name, value, true);
  }
  DlbsJson variables = config.value("variables", DlbsJson::object());
  for (const auto& [name, values] : request.variables) variables[name] = values;
  for (auto& [name, values] : variables.items()) {
    if (!values.is_array()) values = DlbsJson::array({values});
    if (values.empty()) {
      throw core::UsageError(request.path + ": variable '" + name + "' has no values");
    }
    for (const auto& v : values) {
      if (v.is_object() || v.is_array()) {
        throw core::UsageError(request.path + ": variable '" + name + "' has the value " +
                               v.dump() + "; a variable's values are strings, numbers or booleans");
      }
    }
  }
  for (const auto& [name, value] : request.params) parameters[name] = value;
  DlbsJson extensions = DlbsJson::array({{{"condition", {{"exp.framework", "pytorch"}}},
                                          {"parameters", {{"exp.framework_title", "PyTorch"}}}}});
  for (const auto& e : config.value("extensions", DlbsJson::array())) extensions.push_back(e);
  for (const auto& e : request.extensions) extensions.push_back(e);
  for (size_t i = 1; i < extensions.size(); ++i) check_extension(extensions[i], i, request.path);
  // the loops: sys.plan_builder.var_order first, then the variables in the file's order
  std::vector<std::string> order;
  if (parameters.contains("sys.plan_builder.var_order") &&
      parameters["sys.plan_builder.var_order"].is_array()) {
    for (const auto& name : parameters["sys.plan_builder.var_order"]) {
      if (name.is_string() && variables.contains(name.get<std::string>())) order.push_back(name);
    }
  }
  for (const auto& [name, _] : variables.items()) {
    if (std::find(order.begin(), order.end(), name) == order.end()) order.push_back(name);
  }
  std::vector<DlbsJson> experiments;
  std::vector<size_t> at(order.size(), 0);
  while (true) {
    DlbsJson experiment = parameters;
    for (size_t v = 0; v < order.size(); ++v) experiment[order[v]] = variables[order[v]][at[v]];
    for (auto& e : apply_extensions(experiment, extensions, request.path))
      experiments.push_back(std::move(e));
    size_t v = order.size();  // the last variable loops fastest, as itertools.product
    while (v > 0 && ++at[v - 1] == variables[order[v - 1]].size()) at[--v] = 0;
    if (v == 0) break;
  }
  for (auto& experiment : experiments) compute_experiment(experiment, types, request);
  return experiments;
}

}  // namespace engine::bench
