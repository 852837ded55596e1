// Parsing of device and dtype names as users write them ("cpu", "cuda:1", "float32").
#pragma once

#include <torch/types.h>

#include <string>

namespace engine::core {

// "cpu", "cuda", "cuda:N". Throws UsageError for anything else, or for CUDA when it is absent.
torch::Device parse_device(const std::string& name);

// "float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "bool".
torch::ScalarType parse_dtype(const std::string& name);
std::string dtype_name(torch::ScalarType type);

// A human-readable list of devices this build can use, e.g. "cpu" or "cpu, cuda:0 (2 GPUs)".
std::string available_devices();

}  // namespace engine::core
