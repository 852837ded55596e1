#include "engine/core/device.hpp"

#include <torch/cuda.h>

#include <utility>

#include "engine/core/errors.hpp"

namespace engine::core {
namespace {

const std::pair<const char*, torch::ScalarType> kDtypes[] = {
    {"float32", torch::kFloat32},   {"float64", torch::kFloat64}, {"float16", torch::kFloat16},
    {"bfloat16", torch::kBFloat16}, {"int8", torch::kInt8},       {"int16", torch::kInt16},
    {"int32", torch::kInt32},       {"int64", torch::kInt64},     {"uint8", torch::kUInt8},
    {"bool", torch::kBool},
};

}  // namespace

torch::Device parse_device(const std::string& name) {
  if (name == "cpu") return torch::Device(torch::kCPU);
  if (name == "cuda" || name.rfind("cuda:", 0) == 0) {
    int index = 0;
    if (name.size() > 5) {
      const std::string digits = name.substr(5);
      if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) {
        throw UsageError("device '" + name + "': expected cpu, cuda or cuda:N");
      }
      index = std::stoi(digits);
    }
    if (!torch::cuda::is_available()) {
      throw UsageError("device '" + name +
                       "': this build of libtorch has no CUDA device available");
    }
    if (index >= static_cast<int>(torch::cuda::device_count())) {
      throw UsageError("device '" + name + "': only " +
                       std::to_string(torch::cuda::device_count()) + " CUDA device(s) found");
    }
    return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
  }
  throw UsageError("device '" + name + "': expected cpu, cuda or cuda:N");
}

torch::ScalarType parse_dtype(const std::string& name) {
  for (const auto& [n, t] : kDtypes) {
    if (name == n) return t;
  }
  std::string known;
  for (const auto& [n, t] : kDtypes) known += (known.empty() ? "" : " ") + std::string(n);
  throw UsageError("unknown dtype '" + name + "' (known: " + known + ")");
}

std::string dtype_name(torch::ScalarType type) {
  for (const auto& [n, t] : kDtypes) {
    if (type == t) return n;
  }
  return c10::toString(type);
}

std::string available_devices() {
  std::string out = "cpu";
  if (torch::cuda::is_available()) {
    const auto n = torch::cuda::device_count();
    for (size_t i = 0; i < n; ++i) out += ", cuda:" + std::to_string(i);
  }
  return out;
}

}  // namespace engine::core
