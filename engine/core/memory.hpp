// How the process allocates memory, and how much it holds. See docs/performance.md, "Memory".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace engine::core {

// caching: freed memory stays in the process for reuse (glibc's malloc told not to hand large
// blocks back to the system after each step; tensors of 4 KiB or less from small_blocks.hpp);
// system: glibc's defaults, unchanged.
enum class AllocatorPolicy { kCaching, kSystem };

// Help text of --allocator, which main() applies before any command runs.
extern const char* const kAllocatorHelp;

// "caching" or "system"; anything else is a UsageError naming --allocator.
AllocatorPolicy parse_allocator(const std::string& name);
const char* allocator_name(AllocatorPolicy policy);

// The value of the first --allocator flag among args (--allocator X or --allocator=X), or
// empty when there is none. main() reads it before any command runs.
std::string allocator_flag(const std::vector<std::string>& args);

// Applies the policy to the process's malloc and to libtorch's CPU allocator (and installs the
// counting of count_cpu_tensor_bytes). Call it before the first large allocation: a block
// already handed out keeps the policy it was allocated under.
void configure_allocator(AllocatorPolicy policy);
AllocatorPolicy allocator_in_use();

// From the first call on (or configure_allocator), libtorch's CPU tensors allocate their data
// through the engine's allocator, which counts what they hold: cpu_tensor_bytes(). Idempotent;
// the Lua runtime paces its collector by it.
void count_cpu_tensor_bytes();
// Bytes of tensor data allocated since count_cpu_tensor_bytes() and not yet freed, as the
// allocator rounds them; 0 before it.
int64_t cpu_tensor_bytes();

// Most memory the process has had resident at once since it started, in bytes.
int64_t peak_resident_bytes();
// Memory resident now, in bytes.
int64_t resident_bytes();

}  // namespace engine::core
