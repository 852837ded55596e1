// The `gpu` tests' main: where no CUDA device exists they are skipped, with the reason, through
// CTest's skip code (SKIP_RETURN_CODE 77), never passed without having run.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <torch/cuda.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (!torch::cuda::is_available()) {
    std::printf("skipped: no CUDA device (%s)\n",
                torch::cuda::device_count() == 0 && !at::hasCUDA()
                    ? "this libtorch was built without CUDA"
                    : "CUDA is built in but no device is visible");
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
