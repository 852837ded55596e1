#include "engine/train/checkpoint_by_name.hpp"

#include <filesystem>
#include <map>
#include <vector>

#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"
#include "engine/io/hdf5.hpp"

namespace engine::train {
namespace fs = std::filesystem;

namespace {

bool is_step(const std::string& text) {
  return !text.empty() && text.size() <= 18 &&
         text.find_first_not_of("0123456789") == std::string::npos;
}

}  // namespace

std::optional<std::pair<std::string, std::string>> checkpoint_name(const std::string& text) {
  std::error_code ec;
  if (fs::exists(text, ec)) return std::nullopt;  // a file whose name holds a ':'
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) return std::nullopt;
  const std::string which = text.substr(colon + 1);
  if (which != "latest" && which != "best" && !is_step(which)) return std::nullopt;
  return std::make_pair(text.substr(0, colon), which);
}

std::string named_checkpoint(const std::string& run_file, const std::string& which,
                             const std::string& flag) {
  auto file = io::h5::open_file_while_written(run_file);
  // what the run file notes: each kept checkpoint's step, and the best one
  std::map<int64_t, std::string> kept;
  std::string best;
  if (io::h5::exists(file.get(), "checkpoints")) {
    const auto group = io::h5::open_group(file.get(), "checkpoints");
    for (const auto& [name, value] : io::h5::read_attributes(group.get())) {
      if (const auto* step = std::get_if<int64_t>(&value)) kept[*step] = name;
      if (const auto* text = std::get_if<std::string>(&value); text && name == "best") best = *text;
    }
  }
  // by location, as the latest: the run file's own folder, wherever it was moved
  const fs::path folder = fs::path(run_file).parent_path() / fs::path(run_file).stem();
  auto beside = [&](const std::string& recorded) {
    return (folder / fs::path(recorded).filename()).string();
  };
  auto listed = [&] {
    std::vector<std::string> names;
    for (const auto& [step, path] : kept) {
      names.push_back(fs::path(path).filename().string() + " (" + run_file + ":" +
                      std::to_string(step) + ")");
    }
    return names.empty() ? std::string("none") : core::join(names, ", ");
  };
  const std::string asked = flag + " " + run_file + ":" + which;
  std::string path;
  if (which == "best") {
    if (best.empty()) {
      throw core::UsageError(asked +
                             ": the run marked no best checkpoint (its trainer has no keep_best);"
                             " its checkpoints: " +
                             listed() + "; :latest takes the newest");
    }
    path = beside(best);
  } else {
    const int64_t step = std::stoll(which);
    const auto it = kept.find(step);
    path = it != kept.end() ? beside(it->second)
                            : (folder / ("ckpt-" + std::to_string(step) + ".h5")).string();
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) {
      throw core::UsageError(asked + ": the run keeps no checkpoint of step " + which +
                             "; its checkpoints: " + listed());
    }
  }
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    throw core::DataError(asked + ": " + fs::path(path).filename().string() + " is missing from " +
                          folder.string());
  }
  return path;
}

}  // namespace engine::train
