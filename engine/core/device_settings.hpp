// The process-wide settings of libtorch's GPU backends, under PyTorch's names, set the same way
// by every command that runs a model (engine train, eval, predict, bench) and recorded in the
// files they write.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace engine::core {

struct DeviceSettings {
  // torch.backends.cudnn.benchmark: cuDNN times its algorithms for each new shape and keeps the
  // fastest. On by default here, as DLBS and NVIDIA's DeepLearningExamples set it (PyTorch's
  // own default is off): a training loop's shapes repeat.
  bool cudnn_benchmark = true;
  // TensorFloat-32 for float32 matrix products (torch.backends.cuda.matmul.allow_tf32) and
  // convolutions (torch.backends.cudnn.allow_tf32): unset keeps PyTorch's defaults (products
  // off, convolutions on); true or false sets both.
  std::optional<bool> tf32;
};

// Help texts of --cudnn_benchmark and --tf32, the same for engine train, eval, predict and bench.
extern const char* const kCudnnBenchmarkHelp;
extern const char* const kTf32Help;

// "true"/"false" (also t/f, 1/0, yes/no, y/n, on/off, in any case: DLBS's str2bool takes
// True) as a flag's value; a UsageError naming the flag otherwise.
bool parse_setting_bool(const std::string& flag, const std::string& text);
// Whether parse_setting_bool takes the text.
bool is_setting_bool(const std::string& text);

// Sets libtorch's global context. Settings of the GPU backends change nothing on the CPU.
void apply_device_settings(const DeviceSettings& settings);

// The settings in force, read back from libtorch: cudnn_benchmark, tf32_matmul, tf32_cudnn.
std::vector<std::pair<std::string, bool>> device_settings_in_force();

}  // namespace engine::core
