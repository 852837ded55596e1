#include <doctest/doctest.h>

#include "engine/core/gpu_facts.hpp"

using namespace engine::core;

TEST_CASE("library versions read as people write them") {
  CHECK(cuda_version_text(13000) == "13.0");
  CHECK(cuda_version_text(12040) == "12.4");
  CHECK(cudnn_version_text(91000) == "9.10.0");  // cuDNN 9's encoding
  CHECK(cudnn_version_text(90501) == "9.5.1");
  CHECK(cudnn_version_text(8906) == "8.9.6");   // cuDNN 8's
  CHECK(nccl_version_text(22703) == "2.27.3");  // NCCL 2.9 and later
  CHECK(nccl_version_text(2708) == "2.7.8");    // before
}

TEST_CASE("the CPU has no GPU facts") {
  CHECK(gpu_facts(c10::Device(c10::kCPU)).empty());
}

TEST_CASE("one OpenMP runtime is loaded: the one libtorch links") {
  (void)torch::ones({64, 64}).sum();  // libtorch is loaded and has run a kernel
  const auto runtimes = loaded_openmp_runtimes();
  REQUIRE(runtimes.size() == 1);  // two would be the engine's copy beside libtorch's own
  CHECK(runtimes[0].find("omp") != std::string::npos);
  CHECK(runtimes[0].find(" (/") != std::string::npos);  // its path, to tell copies apart
}
