#include "engine/core/device_settings.hpp"

#include <ATen/Context.h>

#include "engine/core/errors.hpp"

namespace engine::core {

const char* const kCudnnBenchmarkHelp =
    "cuDNN times its algorithms for each new shape and keeps the fastest (true or false; "
    "default true; CUDA only)";
const char* const kTf32Help =
    "TensorFloat-32 in float32 matrix products and convolutions (true or false; default: "
    "PyTorch's, products off and convolutions on; CUDA only)";

bool parse_setting_bool(const std::string& flag, const std::string& text) {
  if (text == "true" || text == "1" || text == "yes" || text == "on") return true;
  if (text == "false" || text == "0" || text == "no" || text == "off") return false;
  throw UsageError(flag + " takes true or false, got '" + text + "'");
}

void apply_device_settings(const DeviceSettings& settings) {
  auto& context = at::globalContext();
  context.setBenchmarkCuDNN(settings.cudnn_benchmark);
  if (settings.tf32) {
    // the allow_tf32 pair that torch.backends.cuda.matmul and torch.backends.cudnn set
    context.setAllowTF32CuBLAS(*settings.tf32);
    context.setAllowTF32CuDNN(*settings.tf32);
  }
}

std::vector<std::pair<std::string, bool>> device_settings_in_force() {
  const auto& context = at::globalContext();
  return {{"cudnn_benchmark", context.benchmarkCuDNN()},
          {"tf32_matmul", context.allowTF32CuBLAS()},
          {"tf32_cudnn", context.allowTF32CuDNN()}};
}

}  // namespace engine::core
