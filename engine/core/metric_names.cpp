#include "engine/core/metric_names.hpp"

#include "engine/core/errors.hpp"

namespace engine::core {

int64_t topk_of(const std::string& name) {
  if (name.size() < 4 || name.compare(0, 3, "top") != 0) return 0;
  const std::string digits = name.substr(3);
  if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) return 0;
  return std::stoll(digits);
}

bool is_class_count_metric(const std::string& name) {
  return name == "precision" || name == "recall" || name == "f1";
}

namespace {

std::map<std::string, bool>& declared() {
  static std::map<std::string, bool> directions;
  return directions;
}

}  // namespace

bool larger_is_better(const std::string& metric) {
  const auto dot = metric.rfind('.');
  const std::string name = dot == std::string::npos ? metric : metric.substr(dot + 1);
  const auto it = declared().find(name);
  if (it != declared().end()) return it->second;
  return name == "accuracy" || topk_of(name) > 0 || is_class_count_metric(name);
}

void declare_direction(const std::string& metric, bool larger) {
  declared()[metric] = larger;
}

std::map<std::string, bool> declared_directions() {
  return declared();
}

void check_path_name(const std::string& what, const std::string& name) {
  bool plain = !name.empty() && name != "." && name != "..";
  for (const char c : name) {
    if (c == '/' || c == '\\' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f) plain = false;
  }
  if (!plain) {
    throw UsageError(what + " '" + name +
                     "' cannot name a file or an HDF5 dataset: it must not be empty, '.' or "
                     "'..', nor hold '/', '\\' or control characters");
  }
}

}  // namespace engine::core
