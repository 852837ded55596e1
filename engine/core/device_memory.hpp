// Memory on an accelerator, as libtorch's CUDA caching allocator counts it.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>

namespace engine::core {

// Most bytes of tensor data allocated on the device at once since the process started or the
// last reset_peak_device_bytes (what PyTorch's torch.cuda.max_memory_allocated reports); 0 for
// the CPU, and for a CUDA device in a build against a libtorch without CUDA.
int64_t peak_device_bytes(const c10::Device& device);
// The same for the memory the caching allocator held from the driver (allocated and cached:
// torch.cuda.max_memory_reserved).
int64_t peak_device_reserved_bytes(const c10::Device& device);
// Starts both peaks again from what is allocated now (torch.cuda.reset_peak_memory_stats): a
// benchmark's warm-up and a run's first steps leave buffers that later steps never need again.
void reset_peak_device_bytes(const c10::Device& device);

// Caps what the caching allocator may take on the device: `fraction` of its memory
// (torch.cuda.set_per_process_memory_fraction). An allocation past it fails as out of memory.
// Nothing on the CPU.
void limit_device_memory(const c10::Device& device, double fraction);
// Makes a CUDA device with an index the current one of this process (torch.cuda.set_device), so
// that work and libraries that use "the current device" (NCCL's communicators) land on it.
// Nothing for other devices.
void make_current_device(const c10::Device& device);
// The device's whole memory in bytes; 0 for the CPU and without CUDA.
int64_t device_memory_bytes(const c10::Device& device);

}  // namespace engine::core
