#include "engine/bench/sweep.hpp"

#include <algorithm>
#include <set>

#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"
#include "engine/core/regex.hpp"
#include "engine/core/sha256.hpp"

namespace engine::bench {
namespace {

using core::UsageError;

bool own_name(const std::string& name) {
  return !name.empty() && name[0] == '_';
}

std::string known_names(const Schema& schema) {
  std::vector<std::string> names;
  for (const auto& entry : schema) names.push_back(entry.first);
  return core::join(names);
}

std::string extension_section(size_t index) {
  return "extensions[" + std::to_string(index + 1) + "]";
}

class Validator {
 public:
  Validator(const SweepSpec& spec, const Schema& schema) : spec_(spec), schema_(schema) {}

  void key(const std::string& section, const std::string& name, const char* what) const {
    if (own_name(name) || schema_.count(name)) return;
    std::string hint;
    if (name == "forward_only") hint = " (DLBS's forward_only is phase = 'inference' here)";
    if (name == "data_loader_only") hint = " (DLBS's data_loader_only is phase = 'data_ingestion')";
    throw UsageError(std::string(what) + " '" + name + "' in " + section + where(section, name) +
                     " is not a benchmark parameter" + hint + "; parameters: " +
                     known_names(schema_) + " (names starting with '_' are the script's own)");
  }
  void params(const std::string& section, const Params& params, const char* what) const {
    for (const auto& entry : params) key(section, entry.first, what);
  }
  std::string where(const std::string& section, const std::string& name) const {
    return spec_.locate ? spec_.locate(section, name) : std::string();
  }

 private:
  const SweepSpec& spec_;
  const Schema& schema_;
};

// A point being expanded: its parameters as written, some of them computed.
struct Draft {
  Params params;
  std::string made_by;
  std::string enabled_by;  // what set `enabled` last
};

// Resolves the parameters of one draft, computing each computed one at most once and catching
// parameters that depend on themselves.
class Resolver {
 public:
  explicit Resolver(const Params& params) : params_(params) {}

  Value get(const std::string& name) {
    const auto it = params_.find(name);
    if (it == params_.end()) {
      throw UsageError("'" + name + "' is not a parameter of this point (it has: " + names() + ")");
    }
    if (!it->second.compute) return it->second.value;
    if (const auto done = cache_.find(name); done != cache_.end()) return done->second;
    if (const auto first = std::find(stack_.begin(), stack_.end(), name); first != stack_.end()) {
      std::vector<std::string> cycle(first, stack_.end());
      cycle.push_back(name);
      throw UsageError("computed parameter '" + name +
                       "' depends on itself: " + core::join(cycle, " -> "));
    }
    stack_.push_back(name);
    Value value;
    try {
      value = it->second.compute(getter());
    } catch (const core::ScriptError& e) {
      if (stack_.size() > 1) throw;
      throw core::ScriptError("computing parameter '" + name + "': " + e.what(), e.traceback(),
                              e.exit_code());
    }
    stack_.pop_back();
    cache_[name] = value;
    return value;
  }

  Getter getter() {
    return [this](const std::string& name) { return get(name); };
  }

 private:
  std::string names() const {
    std::vector<std::string> out;
    for (const auto& entry : params_) out.push_back(entry.first);
    return core::join(out);
  }

  const Params& params_;
  std::map<std::string, Value> cache_;
  std::vector<std::string> stack_;
};

class Matcher {
 public:
  // Whether the extension applies to the point; `captures` gets what its match tests captured
  // (_match_<key>_0 the whole value, _match_<key>_<n> group n, "" where a group took no part).
  bool matches(const Extension& extension, const Params& params, Params& captures) {
    Resolver resolver(params);
    const Getter get = resolver.getter();
    for (const auto& [name, test] : extension.condition) {
      if (!params.count(name)) return false;  // a script's own name the point does not set
      const Value value = get(name);
      if (test.kind == Test::Kind::kMatch) {
        if (!matched_from_start(test, name, value, captures)) return false;
        continue;
      }
      if (!passes(test, value, get)) return false;
    }
    return !extension.when || extension.when(get);
  }

  // Compiles a pattern once; a malformed one is a UsageError.
  const core::Regex& regex(const std::string& pattern, const std::string& context) {
    auto it = compiled_.find(pattern);
    if (it != compiled_.end()) return it->second;
    try {
      return compiled_.emplace(pattern, core::Regex(pattern)).first->second;
    } catch (const core::RegexError& e) {
      throw UsageError(context + ": the pattern '" + pattern +
                       "' is not a regular expression: " + e.what());
    }
  }

 private:
  bool passes(const Test& test, const Value& value, const Getter& get) {
    switch (test.kind) {
      case Test::Kind::kEquals:
      case Test::Kind::kAnyOf:
        return std::any_of(test.values.begin(), test.values.end(),
                           [&](const Value& v) { return values_equal(v, value); });
      case Test::Kind::kPattern:
        return regex(test.pattern, "a condition").search(value_text(value)).has_value();
      case Test::Kind::kMatch:  // matches() handles it, with its captures
        return false;
      case Test::Kind::kPredicate:
        return test.predicate(value, get);
    }
    return false;
  }

  bool matched_from_start(const Test& test, const std::string& name, const Value& value,
                          Params& captures) {
    const std::string text = value_text(value);
    const auto found = regex(test.pattern, "a condition").match_start(text);
    if (!found) return false;
    captures["_match_" + name + "_0"] = Value{text};
    for (size_t g = 1; g < found->groups.size(); ++g)
      captures["_match_" + name + "_" + std::to_string(g)] = Value{found->groups[g]};
    return true;
  }

  std::map<std::string, core::Regex> compiled_;
};

std::vector<std::string> loop_order(const SweepSpec& spec, const Validator& check) {
  std::vector<std::string> order;
  for (const auto& name : spec.order) {
    if (!spec.variables.count(name)) {
      throw UsageError("order names '" + name + "'" + check.where("order", name) +
                       ", which is not a variable of the sweep");
    }
    if (std::find(order.begin(), order.end(), name) != order.end()) {
      throw UsageError("order names '" + name + "' twice" + check.where("order", name));
    }
    order.push_back(name);
  }
  for (const auto& entry : spec.variables) {
    if (std::find(order.begin(), order.end(), entry.first) == order.end()) {
      order.push_back(entry.first);
    }
  }
  return order;
}

// A variable given from the command line: its values replace the script's, and a new one
// loops innermost.
void set_variable(SweepSpec& spec, const std::string& name, std::vector<Value> values) {
  if (!spec.variables.count(name)) {
    if (spec.order.empty()) {
      for (const auto& entry : spec.variables) spec.order.push_back(entry.first);
    }
    spec.order.push_back(name);
  }
  spec.variables[name] = std::move(values);
  spec.parameters.erase(name);
}

void apply_overrides(SweepSpec& spec, const Overrides& overrides, const Validator& check,
                     Params& final_values) {
  for (const auto& [name, values] : overrides.dlbs_vars) {
    check.key("-V", name, "-V");
    if (values.empty()) throw UsageError("-V " + name + " gives no values");
    set_variable(spec, name, values);
  }
  for (const auto& [name, value] : overrides.dlbs_params) {
    check.key("-P", name, "-P");
    spec.parameters[name] = value;  // a variable of that name, and extensions, still win
  }
  for (const auto& [name, text] : overrides.var) {
    check.key("--var", name, "--var");
    std::vector<Value> values;
    size_t start = 0;
    while (true) {
      const size_t comma = text.find(',', start);
      values.push_back(parse_value(text.substr(start, comma - start)));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    set_variable(spec, name, std::move(values));
  }
  for (const auto& [name, text] : overrides.set) {
    check.key("--set", name, "--set");
    const Value value = parse_value(text);
    if (spec.variables.count(name)) {
      spec.variables[name] = {value};
    } else {
      spec.parameters[name] = value;
      final_values[name] = value;
    }
  }
}

void check_spec(const SweepSpec& spec, const Validator& check, Matcher& matcher) {
  check.params("parameters", spec.parameters, "parameter");
  for (const auto& name : spec.oom_family) {
    check.key("oom_family", name, "oom_family's");
    if (name == "batch_size") {
      throw UsageError("oom_family names 'batch_size'" + check.where("oom_family", name) +
                       ": the family is what stays the same while the batch grows");
    }
  }
  for (const auto& [name, values] : spec.variables) {
    check.key("variables", name, "variable");
    if (values.empty()) {
      throw UsageError("variable '" + name + "'" + check.where("variables", name) +
                       " has no values: the sweep would expand to no points");
    }
  }
  for (size_t i = 0; i < spec.extensions.size(); ++i) {
    const auto& extension = spec.extensions[i];
    const auto section = extension_section(i);
    for (const auto& [name, test] : extension.condition) {
      check.key(section, name, "condition on");
      if (test.kind == Test::Kind::kPattern || test.kind == Test::Kind::kMatch) {
        matcher.regex(test.pattern, section + check.where(section, name));
      }
    }
    check.params(section, extension.parameters, "parameter");
    for (const auto& one_case : extension.cases) check.params(section, one_case, "case parameter");
  }
}

// A resolved parameter must have the type of its default; integers stand for numbers.
void check_type(const std::string& name, const Value& value, const Schema& schema,
                const PlannedPoint& point, size_t index) {
  const auto it = schema.find(name);
  if (it == schema.end()) return;
  const Value& model = it->second;
  const bool same = model.index() == value.index() || (std::holds_alternative<double>(model) &&
                                                       std::holds_alternative<int64_t>(value));
  if (same) return;
  const std::string wanted = std::holds_alternative<int64_t>(model)
                                 ? std::string("an integer")
                                 : std::string("a ") + value_type(model);
  throw UsageError("parameter '" + name + "' of point " + std::to_string(index + 1) + " (" +
                   point.made_by + ") is the " + value_type(value) + " " + value_text(value) +
                   "; it must be " + wanted);
}

std::string identity_text(const Point& params, bool with_batch) {
  std::string text;
  for (const auto& [name, value] : params) {
    if (name == "enabled" || (!with_batch && name == "batch_size")) continue;
    // one process, the default: left out so that points from before world_size keep their ids
    if (name == "world_size" && value_text(value) == "1") continue;
    const char tag = std::holds_alternative<std::string>(value) ? 's'
                     : std::holds_alternative<bool>(value)      ? 'b'
                                                                : 'n';
    text += name + "=" + tag + ":" + value_text(value) + "\n";
  }
  return text;
}

}  // namespace

std::pair<std::string, std::string> split_assignment(const std::string& text, const char* flag) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw UsageError(std::string(flag) + " takes name=value, got '" + text + "'");
  }
  return {text.substr(0, eq), text.substr(eq + 1)};
}

std::string point_id(const Point& params) {
  return core::sha256_hex(identity_text(params, true)).substr(0, 16);
}

std::vector<std::string> oom_family(const SweepSpec& spec) {
  return spec.oom_family.empty() ? kDefaultOomFamily : spec.oom_family;
}

std::string batch_family_id(const Point& params, const std::vector<std::string>& family) {
  Point members;
  for (const auto& name : family) {
    if (const auto it = params.find(name); it != params.end()) members.insert(*it);
  }
  return core::sha256_hex(identity_text(members, false)).substr(0, 16);
}

namespace {

// The Cartesian product of the variables, the first of the order changing slowest.
std::vector<Draft> product(const SweepSpec& spec, const std::vector<std::string>& order,
                           const Params& base) {
  std::vector<Draft> drafts;
  std::vector<size_t> at(order.size(), 0);
  while (true) {
    Draft draft{base, "variables", "parameters"};
    for (size_t v = 0; v < order.size(); ++v) {
      draft.params[order[v]] = spec.variables.at(order[v])[at[v]];
    }
    drafts.push_back(std::move(draft));
    size_t v = order.size();
    while (v > 0 && ++at[v - 1] == spec.variables.at(order[v - 1]).size()) at[--v] = 0;
    if (v == 0) break;
  }
  return drafts;
}

// Each extension in turn on the drafts it matches: its parameters set, its cases forked.
std::vector<Draft> extend(const SweepSpec& spec, Matcher& matcher, std::vector<Draft> drafts) {
  for (size_t i = 0; i < spec.extensions.size(); ++i) {
    const auto& extension = spec.extensions[i];
    std::vector<Draft> next;
    for (auto& draft : drafts) {
      Params captures;
      if (!matcher.matches(extension, draft.params, captures)) {
        next.push_back(std::move(draft));
        continue;
      }
      for (auto& [name, value] : captures) draft.params[name] = std::move(value);
      for (const auto& [name, param] : extension.parameters) draft.params[name] = param;
      draft.made_by = extension_section(i);
      if (extension.parameters.count("enabled")) draft.enabled_by = draft.made_by;
      if (extension.cases.empty()) {
        next.push_back(std::move(draft));
        continue;
      }
      for (size_t c = 0; c < extension.cases.size(); ++c) {
        Draft forked = draft;
        for (const auto& [name, param] : extension.cases[c]) forked.params[name] = param;
        forked.made_by = extension_section(i) + ".cases[" + std::to_string(c + 1) + "]";
        if (extension.cases[c].count("enabled")) forked.enabled_by = forked.made_by;
        next.push_back(std::move(forked));
      }
    }
    drafts = std::move(next);
  }

  return drafts;
}

// A draft as a planned point: every parameter resolved (functions called) and type-checked,
// active unless enabled = false or the sweep's where says no.
PlannedPoint resolve(Draft& draft, const SweepSpec& spec, const Schema& schema,
                     const Validator& check, const Params& final_values, size_t index) {
  for (const auto& [name, param] : final_values) draft.params[name] = param;
  if (final_values.count("enabled")) draft.enabled_by = "--set";
  PlannedPoint point;
  point.made_by = draft.made_by;
  Resolver resolver(draft.params);
  for (const auto& entry : draft.params) {
    point.params[entry.first] = resolver.get(entry.first);
    check_type(entry.first, point.params[entry.first], schema, point, index);
  }
  if (!std::get<bool>(point.params.at("enabled"))) {
    point.active = false;
    point.inactive_reason = "enabled = false (" + draft.enabled_by + ")";
  } else if (spec.where) {
    const Point& resolved = point.params;
    const Getter get = [&resolved, &resolver](const std::string& name) {
      return resolved.count(name) ? resolved.at(name) : resolver.get(name);
    };
    if (!spec.where(get)) {
      point.active = false;
      point.inactive_reason = "where" + check.where("where", "");
    }
  }
  point.id = point_id(point.params);
  return point;
}

// No two active points alike, and at least one to run.
void check_points(const SweepSpec& spec, const std::vector<PlannedPoint>& points) {
  std::map<std::string, size_t> seen;
  size_t active = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    if (!points[i].active) continue;
    ++active;
    const auto [it, fresh] = seen.emplace(points[i].id, i);
    if (fresh) continue;
    const auto& first = points[it->second];
    throw UsageError("points " + std::to_string(it->second + 1) + " and " + std::to_string(i + 1) +
                     " are the same point (" + point_text(points[i].params) +
                     "): the first made by " + first.made_by + ", the second by " +
                     points[i].made_by +
                     "; give the cases or variables a parameter that tells them apart");
  }
  if (active == 0) {
    throw UsageError("the sweep '" + spec.name + "' has no point to run: all " +
                     std::to_string(points.size()) +
                     " points are inactive (enabled = false or where)");
  }
}

}  // namespace

std::vector<PlannedPoint> expand(SweepSpec spec, const Schema& schema, const Overrides& overrides) {
  const Validator check(spec, schema);
  Matcher matcher;
  Params final_values;
  apply_overrides(spec, overrides, check, final_values);
  check_spec(spec, check, matcher);
  const auto order = loop_order(spec, check);
  Params base;
  for (const auto& [name, value] : schema) base[name] = value;
  if (base.count("data") && base.count("data_dir")) {
    // DLBS: a dataset's folder means real data unless `data` says otherwise (synthetic by default)
    base["data"].compute = [](const Getter& get) {
      return Value(value_text(get("data_dir")).empty() ? "synthetic" : "real");
    };
  }
  for (const auto& [name, param] : spec.parameters) base[name] = param;
  auto drafts = extend(spec, matcher, product(spec, order, base));
  std::vector<PlannedPoint> points;
  points.reserve(drafts.size());
  for (auto& draft : drafts) {
    points.push_back(resolve(draft, spec, schema, check, final_values, points.size()));
  }
  check_points(spec, points);
  return points;
}

}  // namespace engine::bench
