#include <doctest/doctest.h>

#include <ATen/Context.h>

#include "engine/core/device_settings.hpp"
#include "engine/core/errors.hpp"

using namespace engine::core;

namespace {

bool setting(const std::string& name) {
  for (const auto& [key, value] : device_settings_in_force()) {
    if (key == name) return value;
  }
  FAIL("no setting " << name);
  return false;
}

}  // namespace

TEST_CASE("device settings apply to libtorch and read back under PyTorch's names") {
  auto& context = at::globalContext();
  const bool benchmark = context.benchmarkCuDNN(), matmul = context.allowTF32CuBLAS(),
             cudnn = context.allowTF32CuDNN();

  DeviceSettings defaults;
  apply_device_settings(defaults);
  CHECK(setting("cudnn_benchmark"));
  CHECK(setting("tf32_matmul") == matmul);  // unset tf32 keeps what libtorch had
  CHECK(setting("tf32_cudnn") == cudnn);

  DeviceSettings off;
  off.cudnn_benchmark = false;
  off.tf32 = false;
  apply_device_settings(off);
  CHECK_FALSE(setting("cudnn_benchmark"));
  CHECK_FALSE(setting("tf32_matmul"));
  CHECK_FALSE(setting("tf32_cudnn"));

  DeviceSettings on;
  on.tf32 = true;
  apply_device_settings(on);
  CHECK(setting("tf32_matmul"));
  CHECK(setting("tf32_cudnn"));

  context.setBenchmarkCuDNN(benchmark);
  context.setAllowTF32CuBLAS(matmul);
  context.setAllowTF32CuDNN(cudnn);
}

TEST_CASE("a setting's value is true or false, and a bad one names the flag") {
  CHECK(parse_setting_bool("--tf32", "true"));
  CHECK(parse_setting_bool("--tf32", "on"));
  CHECK_FALSE(parse_setting_bool("--tf32", "0"));
  // DLBS's str2bool spellings, in any case
  CHECK(parse_setting_bool("--forward_only", "True"));
  CHECK(parse_setting_bool("--forward_only", "T"));
  CHECK(parse_setting_bool("--forward_only", "ON"));
  CHECK_FALSE(parse_setting_bool("--forward_only", "False"));
  CHECK_FALSE(parse_setting_bool("--forward_only", "f"));
  CHECK(is_setting_bool("TRUE"));
  CHECK_FALSE(is_setting_bool("maybe"));
  try {
    parse_setting_bool("--tf32", "maybe");
    FAIL("expected a UsageError");
  } catch (const UsageError& e) {
    CHECK(std::string(e.what()) == "--tf32 takes true or false, got 'maybe'");
  }
}
