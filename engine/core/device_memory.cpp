#include "engine/core/device_memory.hpp"

// Defined by CMake for this file alone when the libtorch found has CUDA (a definition on every
// file would make the shared precompiled header unusable).
#ifdef ENGINE_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <torch/version.h>
#endif

namespace engine::core {
namespace {

#ifdef ENGINE_WITH_CUDA
// The caching allocator's statistics exist once CUDA is initialised, which libtorch does lazily
// (2.x answers "Invalid device argument" before the first allocation)
int device_index(const c10::Device& device) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 6)
  at::globalContext().lazyInitDevice(c10::DeviceType::CUDA);
#else
  at::globalContext().lazyInitCUDA();
#endif
  return device.has_index() ? device.index() : c10::cuda::current_device();
}

// allocated_bytes and reserved_bytes are indexed by StatType, whose first entry is AGGREGATE
// (every pool) in libtorch 1.13 and 2.x alike; the enum itself moved to another namespace in 2.x
constexpr size_t kAggregate = 0;
#endif

}  // namespace

int64_t peak_device_bytes(const c10::Device& device) {
#ifdef ENGINE_WITH_CUDA
  if (device.is_cuda()) {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device_index(device));
    return stats.allocated_bytes[kAggregate].peak;
  }
#endif
  (void)device;
  return 0;
}

int64_t peak_device_reserved_bytes(const c10::Device& device) {
#ifdef ENGINE_WITH_CUDA
  if (device.is_cuda()) {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device_index(device));
    return stats.reserved_bytes[kAggregate].peak;
  }
#endif
  (void)device;
  return 0;
}

void reset_peak_device_bytes(const c10::Device& device) {
#ifdef ENGINE_WITH_CUDA
  if (device.is_cuda()) c10::cuda::CUDACachingAllocator::resetPeakStats(device_index(device));
#endif
  (void)device;
}

void limit_device_memory(const c10::Device& device, double fraction) {
#ifdef ENGINE_WITH_CUDA
  if (device.is_cuda()) {
    c10::cuda::CUDACachingAllocator::setMemoryFraction(fraction, device_index(device));
  }
#endif
  (void)device;
  (void)fraction;
}

void make_current_device(const c10::Device& device) {
#ifdef ENGINE_WITH_CUDA
  if (device.is_cuda() && device.has_index()) c10::cuda::set_device(device.index());
#endif
  (void)device;
}

int64_t device_memory_bytes(const c10::Device& device) {
#ifdef ENGINE_WITH_CUDA
  if (device.is_cuda()) {
    return static_cast<int64_t>(
        at::cuda::getDeviceProperties(device_index(device))->totalGlobalMem);
  }
#endif
  (void)device;
  return 0;
}

}  // namespace engine::core
