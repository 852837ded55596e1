// fuzz_replay TARGET CORPUS...: runs a fuzz target over every file of its corpus folders (the
// inputs libFuzzer found interesting, and the ones that once crashed), as the test suite does.
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "engine/io/hdf5.hpp"
#include "tests/fuzz/fuzz_target.hpp"

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  const auto& targets = engine::fuzz::targets();
  if (argc < 3 || !targets.count(argv[1])) {
    std::fprintf(stderr, "usage: fuzz_replay TARGET CORPUS_DIR...\ntargets:");
    for (const auto& [name, target] : targets) std::fprintf(stderr, " %s", name.c_str());
    std::fprintf(stderr, "\n");
    return 2;
  }
  spdlog::set_level(spdlog::level::off);
  engine::io::h5::quiet_errors();
  torch::set_num_threads(1);
  const std::string name = argv[1];
  std::vector<fs::path> inputs;
  for (int i = 2; i < argc; ++i) {
    if (!fs::is_directory(argv[i])) {
      std::fprintf(stderr, "fuzz_replay: %s is not a folder\n", argv[i]);
      return 2;
    }
    for (const auto& entry : fs::directory_iterator(argv[i]))
      if (entry.is_regular_file()) inputs.push_back(entry.path());
  }
  std::sort(inputs.begin(), inputs.end());
  for (const auto& path : inputs) {
    std::ifstream in(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    engine::fuzz::set_input_name(path.string());
    engine::fuzz::run_one(name, targets.at(name), reinterpret_cast<const uint8_t*>(bytes.data()),
                          bytes.size());
  }
  std::printf("%s: %zu inputs replayed, none crashed\n", name.c_str(), inputs.size());
  return inputs.empty() ? 1 : 0;
}
