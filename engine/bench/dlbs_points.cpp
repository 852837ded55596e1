#include "engine/bench/dlbs_points.hpp"

#include <cstdlib>
#include <map>
#include <sstream>

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

DlbsGpus dlbs_gpus(const std::string& gpus, const std::string& what) {
  std::string list = gpus;
  for (auto& c : list) c = c == ':' || c == ',' ? ' ' : c;
  std::vector<int64_t> ids;
  std::istringstream words(list);
  for (std::string word; words >> word;) {
    char* end = nullptr;
    const long long id = std::strtoll(word.c_str(), &end, 10);
    if (*end != '\0' || id < 0) {
      throw core::UsageError(what + ": exp.gpus lists GPU indices (\"0,1\"), got '" + word + "'");
    }
    ids.push_back(id);
  }
  DlbsGpus choice;
  if (ids.empty()) {
    choice.device = "cpu";
  } else if (ids.size() == 1) {  // GPU 0 is the first GPU, as a rank's own
    choice.device = ids[0] == 0 ? "cuda" : "cuda:" + std::to_string(ids[0]);
  } else {
    choice.device = "cuda";
    choice.world_size = static_cast<int64_t>(ids.size());
    bool first_ones = true;  // 0, 1, ...: the ranks' own GPUs
    for (size_t i = 0; i < ids.size(); ++i) {
      first_ones = first_ones && ids[i] == static_cast<int64_t>(i);
    }
    if (!first_ones) {
      choice.launcher = "CUDA_VISIBLE_DEVICES=";
      for (size_t i = 0; i < ids.size(); ++i) {
        choice.launcher += (i ? "," : "") + std::to_string(ids[i]);
      }
    }
  }
  return choice;
}

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
    point.params["device"] = device;
    point.params["world_size"] = int64_t{1};
    if (device == "gpu") {  // DLBS's exp.gpus, and its replicas over every node
      const DlbsGpus gpus = dlbs_gpus(e.value("exp.gpus", std::string()), where);
      point.params["device"] = gpus.device == "cpu" ? std::string("cuda") : gpus.device;
      point.params["world_size"] = e.value("exp.num_replicas", gpus.world_size);
      if (!gpus.launcher.empty()) {
        const std::string own = param_text(point.params, "launcher");
        point.params["launcher"] = gpus.launcher + (own.empty() ? "" : " " + own);
      }
    }
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
