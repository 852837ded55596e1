#include "engine/cli/bench_dlbs.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "engine/bench/dlbs_config.hpp"
#include "engine/bench/dlbs_points.hpp"
#include "engine/bench/machine.hpp"
#include "engine/bench/parameters.hpp"
#include "engine/cli/dlbs_flags.hpp"
#include "engine/core/errors.hpp"
#include "engine/report/dlbs_export.hpp"

namespace engine::cli {
namespace {

// "name=value" as DLBS's -P and -V read it; an empty value is None, as in DLBS.
std::pair<std::string, bench::DlbsJson> config_assignment(const std::string& text,
                                                          const char* flag) {
  auto assigned = dlbs_assignment(text, flag);
  if (text.back() == '=') assigned.second = nullptr;
  return assigned;
}

}  // namespace

bool is_dlbs_config(const std::string& path) {
  return path.size() > 5 && path.compare(path.size() - 5, 5, ".json") == 0;
}

DlbsSweep plan_dlbs_config(const std::string& path, const std::vector<std::string>& params,
                           const std::vector<std::string>& variables,
                           const std::vector<std::string>& extensions) {
  bench::DlbsRequest request;
  request.path = path;
  std::ifstream in(path);
  if (!in) throw core::UsageError("cannot read the DLBS config " + path);
  std::stringstream text;
  text << in.rdbuf();
  try {
    request.config = bench::DlbsJson::parse(text.str());
  } catch (const bench::DlbsJson::parse_error& e) {
    // nlohmann's text names the byte: say it as the file's
    throw core::UsageError(path + " is not JSON: " + e.what());
  }
  for (const auto& p : params) {
    auto a = config_assignment(p, "-P");
    if (a.second.is_array()) {
      throw core::UsageError(
          "-P " + p + ": a parameter takes one value; a list of values is a variable, -V" + p);
    }
    request.params.push_back(std::move(a));
  }
  for (const auto& v : variables) request.variables.push_back(config_assignment(v, "-V"));
  for (const auto& e : extensions) {
    try {
      request.extensions.push_back(bench::DlbsJson::parse(e));
    } catch (const bench::DlbsJson::parse_error& error) {
      throw core::UsageError("-E " + e + ": an extension is a JSON object (" + error.what() + ")");
    }
  }
  request.environment = [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (!value) return std::nullopt;
    return std::string(value);
  };
  auto points = bench::dlbs_points(bench::plan_dlbs(request), path);
  // of the names the engine does not use, those the config sets (DLBS's own defaults aside)
  std::set<std::string> not_used;
  for (const auto& name : bench::dlbs_names_given(request)) {
    if (points.not_used.count(name)) not_used.insert(name);
  }
  return {std::filesystem::path(path).stem().string(), std::move(points.plan), std::move(not_used)};
}

std::function<void(size_t, const io::BenchPoint&)> dlbs_log_writer(
    const std::vector<bench::PlannedPoint>& plan, const std::string& bench_file, std::FILE* out) {
  std::vector<std::string> logs(plan.size());
  std::map<std::string, size_t> first_with;  // log file -> the first active point writing it
  bool any = false;
  for (size_t i = 0; i < plan.size(); ++i) {
    if (plan[i].dlbs_experiment.empty() || !plan[i].active) continue;
    const auto experiment = bench::DlbsJson::parse(plan[i].dlbs_experiment);
    const auto log = experiment.find("exp.log_file");
    if (log == experiment.end() || !log->is_string() || log->get<std::string>().empty()) continue;
    logs[i] = log->get<std::string>();
    any = true;
    const auto [at, first] = first_with.emplace(logs[i], i);
    if (!first) {
      std::fprintf(out,
                   "note: points %zu and %zu have one exp.log_file (%s): the later one's log "
                   "replaces the earlier's (DLBS would skip the later point)\n",
                   at->second + 1, i + 1, logs[i].c_str());
    }
  }
  if (!any) return nullptr;
  io::BenchContents file;  // what a record reads of its benchmark file
  file.path = bench_file;
  for (const auto& [name, value] : bench::machine_description()) {
    if (const auto* text = std::get_if<std::string>(&value)) file.attributes[name] = *text;
  }
  report::DlbsNames names;
  for (const auto& parameter : bench::point_parameters()) {
    if (!parameter.dlbs.empty()) names[parameter.name] = parameter.dlbs;
  }
  return [plan_logs = std::move(logs), file, names, &plan, out](size_t i,
                                                                const io::BenchPoint& point) {
    const std::string& path = plan_logs[i];
    if (path.empty()) return;
    // a log there already is replaced only when the engine wrote it (a point run again): DLBS's
    // own logs, and any other file of that name, are left as they are
    if (std::ifstream existing{path}) {
      std::stringstream before;
      before << existing.rdbuf();
      if (before.str().find("\n__engine.file__= ") == std::string::npos) {
        std::fprintf(out, "  %s exists and is not the engine's DLBS log: left as it is\n",
                     path.c_str());
        return;
      }
    }
    const std::string text = report::dlbs_log(plan[i].dlbs_experiment, file, point, names);
    std::error_code error;
    const auto folder = std::filesystem::path(path).parent_path();
    if (!folder.empty()) std::filesystem::create_directories(folder, error);
    std::ofstream log(path, std::ios::trunc);
    log << text;
    log.close();
    if (!log) {
      std::fprintf(out,
                   "  cannot write the point's DLBS log %s (exp.log_file); the benchmark "
                   "file has its results\n",
                   path.c_str());
    } else {
      std::fprintf(out, "  DLBS log: %s\n", path.c_str());
    }
  };
}

}  // namespace engine::cli
