#include "engine/bench/dlbs_compute.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>
#include <vector>

#include "engine/bench/dlbs_defaults.hpp"
#include "engine/bench/python_expression.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/regex.hpp"

namespace engine::bench {
namespace {

std::string trimmed(const std::string& text) {
  size_t a = 0, b = text.size();
  while (a < b && std::isspace(static_cast<unsigned char>(text[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(text[b - 1]))) --b;
  return text.substr(a, b - a);
}

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size()) {
    text.replace(at, from.size(), to);
  }
}

class Computer {
 public:
  Computer(DlbsJson& experiment, const DlbsTypes& types, const DlbsRequest& request)
      : e_(experiment), types_(types), request_(request) {}

  void compute(const std::string& name) {
    if (done_.count(name)) return;
    if (busy_.count(name)) {
      throw core::UsageError(request_.path + ": parameter '" + name +
                             "' refers to itself through its references (a cycle)");
    }
    if (!e_[name].is_string()) {
      done_.insert(name);
      return;
    }
    if (busy_.size() >= 1000) {  // each step of a chain of references is a frame of this
      throw core::UsageError(request_.path + ": parameter '" + name +
                             "' is computed through a chain of more than 1000 references");
    }
    busy_.insert(name);
    const std::string written = e_[name].get<std::string>();
    std::string text = written;
    while (const auto m = reference_.search(text)) {
      const std::string ref = m->groups[1];
      replace_all(text, "${" + ref + "}", value_of(ref, name, written));
    }
    for (size_t open; (open = text.find("$(")) != std::string::npos;) {
      const auto close = text.find(")$", open + 2);
      if (close == std::string::npos) {
        throw core::UsageError(request_.path + ": parameter '" + name + "' = '" + written +
                               "': no ')$' closes its '$('");
      }
      std::string result;
      try {
        result = python_str(evaluate_python(text.substr(open + 2, close - open - 2)));
      } catch (const core::UsageError& error) {
        throw core::UsageError(request_.path + ": parameter '" + name + "' = '" + written +
                               "': " + error.what());
      }
      text = text.substr(0, open) + result + text.substr(close + 2);
    }
    e_[name] = cast(name, text);
    busy_.erase(name);
    done_.insert(name);
  }

 private:
  // ${ref} in `name`'s value: the parameter's computed text, else the environment variable's.
  std::string value_of(const std::string& ref, const std::string& name,
                       const std::string& written) {
    if (e_.contains(ref)) {
      compute(ref);
      return dlbs_text(e_[ref]);
    }
    if (request_.environment) {
      if (const auto env = request_.environment(ref)) return *env;
    }
    if (names_other_framework(ref)) return "";
    const bool looks_like_environment = std::all_of(ref.begin(), ref.end(), [](char c) {
      return std::isupper(c) || std::isdigit(c) || c == '_';
    });
    throw core::UsageError(request_.path + ": parameter '" + name + "' = '" + written +
                           "' refers to ${" + ref + "}, which is no parameter of the experiment" +
                           (looks_like_environment
                                ? " and no environment variable (DLBS's scripts export " + ref +
                                      "; export it before engine bench)"
                                : " (a misspelt name?)"));
  }

  // The computed text as the parameter's type, as DLBS's Processor casts it.
  DlbsJson cast(const std::string& name, const std::string& text) const {
    const auto it = types_.find(name);
    const std::string type = it == types_.end() ? "str" : it->second;
    const std::string t = trimmed(text);
    char* end = nullptr;
    auto refuse = [&]() -> DlbsJson {
      throw core::UsageError(request_.path + ": parameter '" + name + "' is a " + type +
                             " parameter, but its value computes to '" + text + "'");
    };
    if (type == "int") {
      const long long v = std::strtoll(t.c_str(), &end, 10);
      return t.empty() || *end != '\0' ? refuse() : DlbsJson(static_cast<int64_t>(v));
    }
    if (type == "float") {
      const double v = std::strtod(t.c_str(), &end);
      return t.empty() || *end != '\0' ? refuse() : DlbsJson(v);
    }
    if (type == "bool") {
      std::string lower = text;
      for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (lower == "true" || lower == "on" || lower == "1" || lower == "yes") return true;
      if (lower == "false" || lower == "off" || lower == "0" || lower == "no") return false;
      return refuse();
    }
    return text;
  }

  DlbsJson& e_;
  const DlbsTypes& types_;
  const DlbsRequest& request_;
  std::set<std::string> done_, busy_;
  // DLBS's ParamUtils.VAR_PATTERN: the innermost ${name}
  const core::Regex reference_{R"(\$\{([^{}]+)\})"};
};

}  // namespace

void compute_experiment(DlbsJson& experiment, const DlbsTypes& types, const DlbsRequest& request) {
  for (auto& [_, value] : experiment.items()) {
    if (!value.is_array()) continue;
    std::string joined;
    for (size_t i = 0; i < value.size(); ++i) joined += (i ? " " : "") + dlbs_text(value[i]);
    value = joined;
  }
  std::vector<std::string> names;
  for (const auto& [name, _] : experiment.items()) names.push_back(name);
  Computer computer(experiment, types, request);
  for (const auto& name : names) computer.compute(name);
  for (const auto& name : names) {
    if (name.rfind("__dlbs_", 0) == 0) experiment.erase(name);
  }
}

}  // namespace engine::bench
