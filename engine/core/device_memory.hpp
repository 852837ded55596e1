// Memory on an accelerator, as libtorch's CUDA caching allocator counts it.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>

namespace engine::core {

// Most bytes of tensor data allocated on the device at once since the process started (what
// PyTorch's torch.cuda.max_memory_allocated reports); 0 for the CPU, and for a CUDA device in
// a build against a libtorch without CUDA.
int64_t peak_device_bytes(const c10::Device& device);

}  // namespace engine::core
