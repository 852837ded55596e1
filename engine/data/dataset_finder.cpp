#include "engine/data/dataset_finder.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "engine/core/errors.hpp"

namespace engine::data {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> name_variants(const std::string& name) {
  std::vector<std::string> out{name};
  std::string dashed = name, underscored = name;
  std::replace(dashed.begin(), dashed.end(), '_', '-');
  std::replace(underscored.begin(), underscored.end(), '-', '_');
  for (const auto& v : {dashed, underscored}) {
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  return out;
}

std::string how_to_get(const std::string& name) {
  if (name == "mnist" || name == "cifar10" || name == "cifar100") {
    return "run `datasets/fetch " + name +
           "` from the engine's folder (without network: " + "`datasets/fetch " + name +
           " --file PATH` with a copy of its archive, datasets/README.md)";
  }
  if (name == "fashion-mnist" || name == "fashion_mnist") {
    return "install Debian's package: apt-get install dataset-fashion-mnist";
  }
  return "put its files in one of these folders, or point $ENGINE_DATASETS at their parent";
}

bool non_empty_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec) && fs::directory_iterator(p, ec) != fs::directory_iterator();
}

}  // namespace

std::vector<std::string> dataset_roots(const std::vector<std::string>& extra_roots) {
  std::vector<std::string> roots;
  if (const char* env = std::getenv("ENGINE_DATASETS")) {
    std::stringstream in(env);
    for (std::string part; std::getline(in, part, ':');) {
      if (!part.empty()) roots.push_back(part);
    }
  }
  for (const auto& r : extra_roots) roots.push_back(r);
  roots.push_back("/usr/share/datasets");
  return roots;
}

std::string find_dataset(const std::string& name, const std::vector<std::string>& roots) {
  std::vector<std::string> looked;
  for (const auto& root : roots) {
    for (const auto& variant : name_variants(name)) {
      const fs::path p = fs::path(root) / variant;
      if (non_empty_dir(p)) return p.lexically_normal().string();
      looked.push_back(p.lexically_normal().string());
    }
  }
  std::string msg = "dataset '" + name + "' not found; looked in:";
  for (const auto& l : looked) msg += "\n  " + l;
  msg += "\nTo get it, " + how_to_get(name) + ".";
  throw core::DataError(msg);
}

}  // namespace engine::data
