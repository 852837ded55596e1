// The libFuzzer entry point of a fuzzer built from one target file (ENGINE_FUZZ).
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "engine/io/hdf5.hpp"
#include "tests/fuzz/fuzz_target.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);  // the engine's warnings about each bad input
  engine::io::h5::quiet_errors();
  torch::set_num_threads(1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto& [name, target] = *engine::fuzz::targets().begin();
  engine::fuzz::run_one(name, target, data, size);
  return 0;
}
