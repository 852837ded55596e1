#include "engine/core/device_memory.hpp"

// Defined by CMake for this file alone when the libtorch found has CUDA (a definition on every
// file would make the shared precompiled header unusable).
#ifdef ENGINE_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#endif

namespace engine::core {

int64_t peak_device_bytes(const c10::Device& device) {
#ifdef ENGINE_WITH_CUDA
  if (device.is_cuda()) {
    const int index = device.has_index() ? device.index() : c10::cuda::current_device();
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(index);
    // allocated_bytes is indexed by StatType, whose first entry is AGGREGATE (every pool) in
    // libtorch 1.13 and 2.x alike; the enum itself moved to another namespace in 2.x
    constexpr size_t kAggregate = 0;
    return stats.allocated_bytes[kAggregate].peak;
  }
#endif
  (void)device;
  return 0;
}

}  // namespace engine::core
