// Memory for small CPU tensors, apart from the large ones. See docs/performance.md, "Memory".
#pragma once

#include <cstddef>
#include <cstdint>

namespace engine::core {

// Tensors whose data takes at most this many bytes get it from small_block_alloc.
constexpr size_t kSmallBlockMaxBytes = 4096;

// A 64-byte aligned block of at least nbytes (1..kSmallBlockMaxBytes), and in held the bytes
// it takes (nbytes rounded up to its size class); nullptr when the system has no memory left.
// Thread-safe, as is small_block_free.
void* small_block_alloc(size_t nbytes, size_t& held);

// Whether data is a block small_block_alloc handed out. Reads the two words below data, so
// data must have at least that much readable memory before it (any malloc'ed block has).
bool is_small_block(const void* data);

// Puts a block from small_block_alloc back for reuse and returns the bytes it held. Blocks are
// kept in the process (for tensors of the same size class), never returned to malloc.
size_t small_block_free(void* data);

}  // namespace engine::core
