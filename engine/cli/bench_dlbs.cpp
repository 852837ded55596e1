#include "engine/cli/bench_dlbs.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/bench/dlbs_config.hpp"
#include "engine/bench/dlbs_points.hpp"
#include "engine/core/errors.hpp"

namespace engine::cli {
namespace {

// "name=value" as DLBS's -P and -V read it; the value JSON, or its text where it is not.
std::pair<std::string, bench::DlbsJson> dlbs_assignment(const std::string& text, const char* flag) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw core::UsageError(std::string(flag) +
                           " takes name=value (DLBS's -Pexp.num_batches=100), got '" + text + "'");
  }
  const std::string value = text.substr(eq + 1);
  if (value.empty()) return {text.substr(0, eq), nullptr};
  try {
    return {text.substr(0, eq), bench::DlbsJson::parse(value)};
  } catch (const bench::DlbsJson::exception&) {
    return {text.substr(0, eq), value};
  }
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
    auto a = dlbs_assignment(p, "-P");
    if (a.second.is_array()) {
      throw core::UsageError(
          "-P " + p + ": a parameter takes one value; a list of values is a variable, -V" + p);
    }
    request.params.push_back(std::move(a));
  }
  for (const auto& v : variables) request.variables.push_back(dlbs_assignment(v, "-V"));
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

}  // namespace engine::cli
