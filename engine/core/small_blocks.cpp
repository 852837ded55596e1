#include "engine/core/small_blocks.hpp"

#include <array>
#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

namespace engine::core {
namespace {

// Why small tensors have memory of their own: glibc serves a small request from the best-fitting
// free chunk, and in a forward pass the best fit is often the hole an activation buffer has just
// left. A small tensor that outlives the step (a Lua loop's output waiting for the collector)
// then sits at the start of that hole, the next step's activations no longer fit there and
// move up by its size, and the step after that again: the mlp forward pass at batch 64 ran 10%
// slower while its outputs piled up, in C++ as from Lua (build/bin/perf_kept_outputs). Here a
// small tensor only ever takes the place of another small tensor of its size class.
constexpr size_t kSmallGranule = 64;  // size classes: 64, 128, ... kSmallBlockMaxBytes bytes
constexpr size_t kSmallClasses = kSmallBlockMaxBytes / kSmallGranule;
constexpr size_t kBlocksPerSlab = 64;  // a slab is 8 KiB (64-byte class) to 260 KiB (4 KiB)
// Each block has a header of kSmallGranule bytes below its data (so data stays 64-byte
// aligned); its last two words hold kSmallMark and the size class.
constexpr uintptr_t kSmallMark = 0x656e67696e65b10cULL;

struct SizeClass {
  std::mutex mutex;
  void* free_blocks = nullptr;  // data pointers; a free block's first word points to the next
};

struct SmallBlocks {
  std::array<SizeClass, kSmallClasses> size_classes;
  // Slabs are never freed (their blocks are reused), and are listed so that leak checkers see
  // them as reachable.
  std::mutex slabs_mutex;
  std::vector<void*> slabs;
};

// Never destroyed: tensors that static destructors free at exit still come back here.
SmallBlocks& small_blocks() {
  static auto* blocks = new SmallBlocks;
  return *blocks;
}

size_t class_bytes(size_t size_class) {
  return (size_class + 1) * kSmallGranule;
}

// Carves a new slab into blocks of the class and puts them on its free list (size_class.mutex
// held).
bool add_slab(SizeClass& size_class, size_t index) {
  const size_t stride = kSmallGranule + class_bytes(index);
  void* slab = std::malloc(kBlocksPerSlab * stride + kSmallGranule);
  if (!slab) return false;
  {
    SmallBlocks& blocks = small_blocks();
    std::lock_guard<std::mutex> lock(blocks.slabs_mutex);
    try {
      blocks.slabs.push_back(slab);
    } catch (const std::bad_alloc&) {  // the caller reports running out of memory
      std::free(slab);
      return false;
    }
  }
  const auto base = (reinterpret_cast<uintptr_t>(slab) + kSmallGranule - 1) & ~(kSmallGranule - 1);
  for (size_t i = kBlocksPerSlab; i-- > 0;) {
    auto* words = reinterpret_cast<uintptr_t*>(base + i * stride + kSmallGranule);
    words[-2] = kSmallMark;
    words[-1] = index;
    *reinterpret_cast<void**>(words) = size_class.free_blocks;
    size_class.free_blocks = words;
  }
  return true;
}

}  // namespace

void* small_block_alloc(size_t nbytes, size_t& held) {
  if (nbytes == 0 || nbytes > kSmallBlockMaxBytes) return nullptr;
  const size_t index = (nbytes - 1) / kSmallGranule;
  SizeClass& size_class = small_blocks().size_classes[index];
  std::lock_guard<std::mutex> lock(size_class.mutex);
  if (!size_class.free_blocks && !add_slab(size_class, index)) return nullptr;
  void* data = size_class.free_blocks;
  size_class.free_blocks = *static_cast<void**>(data);
  held = class_bytes(index);
  return data;
}

bool is_small_block(const void* data) {
  return static_cast<const uintptr_t*>(data)[-2] == kSmallMark;
}

size_t small_block_free(void* data) {
  const size_t index = static_cast<uintptr_t*>(data)[-1];
  SizeClass& size_class = small_blocks().size_classes[index];
  std::lock_guard<std::mutex> lock(size_class.mutex);
  *static_cast<void**>(data) = size_class.free_blocks;
  size_class.free_blocks = data;
  return class_bytes(index);
}

}  // namespace engine::core
