#include "engine/bench/dlbs_points.hpp"

#include <map>

#include "engine/bench/parameters.hpp"
#include "engine/core/errors.hpp"

namespace engine::bench {
namespace {

// The DLBS names that decide a point's device and processes, read here rather than one to one.
bool read_here(const std::string& name) {
  return name == "exp.device_type" || name == "exp.num_replicas" || name == "exp.status" ||
         name == "exp.gpus" || name == "pytorch.data_loader_only";
}

Value value_for(const Parameter& parameter, const DlbsJson& value, const std::string& where) {
  const Value& type = parameter.default_value;
  if (std::holds_alternative<int64_t>(type) && value.is_number_integer())
    return value.get<int64_t>();
  if (std::holds_alternative<bool>(type) && value.is_boolean()) return value.get<bool>();
  if (std::holds_alternative<std::string>(type) && value.is_string())
    return value.get<std::string>();
  // a text of the right kind (DLBS's -P values arrive as text): read as the flag's would be
  try {
    return parse_parameter(parameter, dlbs_text(value));
  } catch (const core::UsageError& e) {
    throw core::UsageError(where + ": " + parameter.dlbs + " = " + dlbs_text(value) + ": " +
                           e.what());
  }
}

}  // namespace

DlbsPoints dlbs_points(const std::vector<DlbsJson>& experiments, const std::string& path) {
  DlbsPoints out;
  std::map<std::string, size_t> first_of;  // point id -> its first experiment
  for (size_t i = 0; i < experiments.size(); ++i) {
    const DlbsJson& e = experiments[i];
    const std::string where = path + ", experiment " + std::to_string(i + 1);
    PlannedPoint point;
    for (const auto& [name, value] : point_schema()) point.params[name] = value;
    for (const auto& [name, value] : e.items()) {
      const Parameter* parameter = nullptr;
      for (const auto& p : point_parameters()) {
        if (!p.dlbs.empty() && p.dlbs == name) parameter = &p;
      }
      if (read_here(name)) continue;
      if (!parameter) {
        out.not_used.insert(name);
        continue;
      }
      point.params[parameter->name] = value_for(*parameter, value, where);
    }
    const std::string device = e.value("exp.device_type", std::string("cpu"));
    point.params["device"] = device == "gpu" ? std::string("cuda") : device;
    const int64_t replicas = e.value("exp.num_replicas", int64_t{1});
    point.params["world_size"] = device == "gpu" ? replicas : int64_t{1};
    if (e.value("pytorch.data_loader_only", false))
      point.params["phase"] = std::string("data_ingestion");
    point.made_by = "experiment " + std::to_string(i + 1);
    point.dlbs_experiment = e.dump();
    point.id = point_id(point.params);
    if (e.value("exp.status", std::string()) == "disabled") {
      point.active = false;
      point.inactive_reason = "exp.status = disabled";
    } else if (first_of.count(point.id)) {
      point.active = false;
      point.inactive_reason = "the same point as experiment " +
                              std::to_string(first_of[point.id] + 1) +
                              " (they differ only in names the engine does not use)";
    } else {
      first_of[point.id] = i;
    }
    out.plan.push_back(std::move(point));
  }
  return out;
}

}  // namespace engine::bench
