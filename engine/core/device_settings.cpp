#include "engine/core/device_settings.hpp"

#include <ATen/Context.h>

#include <algorithm>
#include <cctype>

#include "engine/core/errors.hpp"

namespace engine::core {

const char* const kCudnnBenchmarkHelp =
    "cuDNN times its algorithms for each new shape and keeps the fastest (true or false; "
    "default true; CUDA only)";
const char* const kTf32Help =
    "TensorFloat-32 in float32 matrix products and convolutions (true or false; default: "
    "PyTorch's, products off and convolutions on; CUDA only)";

namespace {

// 1 for a word that means true, 0 for one that means false, -1 for any other: any case, as
// DLBS's str2bool reads them (True, on, t, 1), plus yes/no
int setting_bool(const std::string& text) {
  std::string lower = text;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* yes : {"true", "t", "1", "yes", "y", "on"}) {
    if (lower == yes) return 1;
  }
  for (const char* no : {"false", "f", "0", "no", "n", "off"}) {
    if (lower == no) return 0;
  }
  return -1;
}

}  // namespace

bool is_setting_bool(const std::string& text) {
  return setting_bool(text) >= 0;
}

bool parse_setting_bool(const std::string& flag, const std::string& text) {
  const int value = setting_bool(text);
  if (value < 0) throw UsageError(flag + " takes true or false, got '" + text + "'");
  return value == 1;
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
