// Differences between the libtorch versions the engine builds against: Debian's 1.13 (CPU) and
// the 2.x of PyTorch's wheels and libtorch downloads (CUDA). One macro per difference, so that
// the code that uses it reads the same for both.
#pragma once

#include <torch/version.h>

#define ENGINE_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) ||         \
   (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

// c10::Allocator::allocate lost its const in libtorch 2.3, which also added copy_data.
#if ENGINE_TORCH_AT_LEAST(2, 3)
#define ENGINE_ALLOCATE_CONST
#else
#define ENGINE_ALLOCATE_CONST const
#endif
