#include "engine/search/trial_process.hpp"

#include <fstream>

namespace engine::search {

std::unique_ptr<core::ChildProcess> start_trial(const std::vector<std::string>& argv,
                                                const std::string& log_path) {
  core::ChildSpec spec;
  spec.argv = argv;
  spec.what = "a trial's engine train";
  spec.output = core::ChildOutput::kFile;
  spec.output_file = log_path;
  return std::make_unique<core::ChildProcess>(spec);
}

std::string failure_reason(const std::string& log_path) {
  std::ifstream in(log_path);
  std::string line, last, error;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    last = line;
    if (line.rfind("error: ", 0) == 0) error = line.substr(7);
  }
  if (!error.empty()) return error;
  return last.empty() ? "it exited without a word (see " + log_path + ")" : last;
}

}  // namespace engine::search
