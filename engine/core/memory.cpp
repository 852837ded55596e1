#include "engine/core/memory.hpp"

#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/alloc_cpu.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "engine/core/errors.hpp"
#include "engine/core/small_blocks.hpp"
#include "engine/core/torch_compat.hpp"

namespace engine::core {
namespace {

AllocatorPolicy policy_in_use = AllocatorPolicy::kSystem;

// glibc serves blocks above its mmap threshold (128 KiB to 32 MiB, adjusted as it goes) with
// their own mmap and unmaps them on free, and gives the top of the heap back (trim) once more
// than twice that threshold is free there. A training step allocates and frees the same large
// activation buffers every time, so each step faulted them in again: hundreds of thousands of
// page faults per epoch, a third of the CPU time in the kernel, and step times that changed by
// 3x with where the heap top happened to lie. Raising both limits to the most mallopt takes
// (2 GiB) keeps freed blocks in the heap, where the next step finds them: the process holds
// on to its peak usage instead of returning it, and blocks over 2 GiB still come from the
// system and go back to it.
constexpr int kKeepBelow = INT_MAX;

std::atomic<int64_t> cpu_tensor_bytes_in_use{0};

void count_bytes(int64_t bytes) {
  cpu_tensor_bytes_in_use.fetch_add(bytes, std::memory_order_relaxed);
}

void count(void* block, int sign) {
  count_bytes(sign * static_cast<int64_t>(malloc_usable_size(block)));
}

// libtorch's CPU blocks are 64-byte aligned. alloc_cpu gets them from posix_memalign, which
// asks glibc for the size plus the alignment and trims the block it finds: a freed block is
// then too small by that margin for the same request. Forward passes that free and ask for the
// same large activations in one order (mnist_cnn under no_grad, batch 64) found no hole to fit
// and grew the heap by a block per pass: 770 MB resident after 60 passes, 300,000 page faults,
// twice the time of the C++ loop. A block from malloc with room to align it by hand fits the
// hole its predecessor left. The block malloc returned is kept in the word before the data.
// Blocks that another allocator handed out before this one was installed can still come back
// through it (libtorch frees some buffers through whatever the CPU allocator is at the time),
// so a block of ours carries a mark, in the word before the one holding malloc's block.
constexpr size_t kAlignment = c10::gAlignment;
constexpr uintptr_t kMark = 0x656e67696e65a11cULL;

void* hand_aligned_alloc(size_t nbytes) {
  static_assert(kAlignment <= 64, "small blocks are 64-byte aligned");
  if (nbytes <= kSmallBlockMaxBytes) {
    size_t held = 0;
    void* data = small_block_alloc(nbytes, held);
    if (data) count_bytes(static_cast<int64_t>(held));
    return data;
  }
  // malloc's blocks are 16-byte aligned, so two words fit below the data within kAlignment
  void* block = std::malloc(nbytes + kAlignment);
  if (!block) return nullptr;
  const auto at = (reinterpret_cast<uintptr_t>(block) + 2 * sizeof(void*) + kAlignment - 1) &
                  ~(uintptr_t{kAlignment} - 1);
  auto* words = reinterpret_cast<uintptr_t*>(at);
  words[-1] = reinterpret_cast<uintptr_t>(block);
  words[-2] = kMark;
  count(block, +1);
  return words;
}

void hand_aligned_free(void* data) {
  if (!data) return;
  if (is_small_block(data)) {
    count_bytes(-static_cast<int64_t>(small_block_free(data)));
    return;
  }
  auto* words = static_cast<uintptr_t*>(data);
  if (words[-2] != kMark) {  // not ours: libtorch's own (posix_memalign) block
    c10::free_cpu(data);
    return;
  }
  words[-2] = 0;
  void* block = reinterpret_cast<void*>(words[-1]);
  count(block, -1);
  std::free(block);
}

void counted_free(void* data) {
  if (!data) return;
  count(data, -1);
  c10::free_cpu(data);
}

// libtorch's CPU tensors allocate their data here: with the caching policy from small_blocks.hpp
// (4 KiB or less) or from malloc, aligned by hand (above); with the system policy from libtorch's
// own alloc_cpu. All count what they hold, reading sizes back from malloc or from the small
// block's size class, so no per-block record is kept. libtorch's profiler
// does not see these blocks (its CPU memory view comes from the default allocator).
class EngineCpuAllocator final : public c10::Allocator {
 public:
  explicit EngineCpuAllocator(bool hand_aligned) : hand_aligned_(hand_aligned) {}
  c10::DataPtr allocate(size_t nbytes) ENGINE_ALLOCATE_CONST override {
    const c10::Device cpu(c10::DeviceType::CPU);
    if (nbytes == 0) return {nullptr, nullptr, raw_deleter(), cpu};
    void* data = nullptr;
    if (hand_aligned_) {
      data = hand_aligned_alloc(nbytes);
    } else {
      data = c10::alloc_cpu(nbytes);  // throws when out of memory
      count(data, +1);
    }
    if (!data) {
      C10_THROW_ERROR(OutOfMemoryError, "CPU: not enough memory: you tried to allocate " +
                                            std::to_string(nbytes) + " bytes.");
    }
    return {data, data, raw_deleter(), cpu};
  }
  c10::DeleterFnPtr raw_deleter() const override {
    return hand_aligned_ ? &hand_aligned_free : &counted_free;
  }
#if ENGINE_TORCH_AT_LEAST(2, 3)
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    std::memcpy(dest, src, count);
  }
#endif

 private:
  bool hand_aligned_;
};

bool allocator_installed = false;

void install_cpu_allocator(AllocatorPolicy policy) {
  static EngineCpuAllocator hand_aligned(true), libtorch_aligned(false);
  // a priority above the default allocator's, so that nothing registered later at the
  // default priority replaces it
  c10::SetCPUAllocator(policy == AllocatorPolicy::kCaching ? &hand_aligned : &libtorch_aligned, 1);
  allocator_installed = true;
}

}  // namespace

const char* const kAllocatorHelp =
    "memory allocation: caching (freed memory kept for reuse) or system (glibc's defaults)";

AllocatorPolicy parse_allocator(const std::string& name) {
  if (name == "caching") return AllocatorPolicy::kCaching;
  if (name == "system") return AllocatorPolicy::kSystem;
  throw UsageError("--allocator must be 'caching' (the default) or 'system', got '" + name + "'");
}

const char* allocator_name(AllocatorPolicy policy) {
  return policy == AllocatorPolicy::kCaching ? "caching" : "system";
}

std::string allocator_flag(const std::vector<std::string>& args) {
  const std::string flag = "--allocator";
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == flag) {
      if (i + 1 >= args.size()) throw UsageError("--allocator needs a value: caching or system");
      return args[i + 1];
    }
    if (args[i].rfind(flag + "=", 0) == 0) return args[i].substr(flag.size() + 1);
  }
  return {};
}

void configure_allocator(AllocatorPolicy policy) {
  if (policy == AllocatorPolicy::kCaching) {
    // mallopt returns 0 when glibc refuses a value; the defaults then stay, which is still a
    // working process, so it is not an error.
    mallopt(M_MMAP_THRESHOLD, kKeepBelow);
    mallopt(M_TRIM_THRESHOLD, kKeepBelow);
  }
  policy_in_use = policy;
  install_cpu_allocator(policy);
}

AllocatorPolicy allocator_in_use() {
  return policy_in_use;
}

void count_cpu_tensor_bytes() {
  if (!allocator_installed) install_cpu_allocator(policy_in_use);
}

int64_t cpu_tensor_bytes() {
  return cpu_tensor_bytes_in_use.load(std::memory_order_relaxed);
}

int64_t peak_resident_bytes() {
  rusage usage{};
  const int64_t peak =
      getrusage(RUSAGE_SELF, &usage) == 0 ? static_cast<int64_t>(usage.ru_maxrss) * 1024 : 0;
  // the kernel updates its high-water mark lazily, so it can lag behind the current figure
  return std::max(peak, resident_bytes());
}

int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  if (!(statm >> size >> resident)) return 0;
  return resident * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace engine::core
