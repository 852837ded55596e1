#include <doctest/doctest.h>
#include <torch/torch.h>

#include <cstdint>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "engine/core/memory.hpp"
#include "engine/core/small_blocks.hpp"

using namespace engine::core;

TEST_CASE("small blocks: size classes, alignment, reuse") {
  size_t held = 0;
  void* a = small_block_alloc(1, held);
  REQUIRE(a != nullptr);
  CHECK(held == 64);
  CHECK(reinterpret_cast<uintptr_t>(a) % 64 == 0);
  CHECK(is_small_block(a));
  CHECK(small_block_free(a) == 64);
  void* b = small_block_alloc(64, held);  // the same class: the block just freed comes back
  CHECK(b == a);
  CHECK(small_block_free(b) == 64);

  void* c = small_block_alloc(2560, held);  // an mlp output at batch 64
  REQUIRE(c != nullptr);
  CHECK(held == 2560);
  void* d = small_block_alloc(2561, held);
  REQUIRE(d != nullptr);
  CHECK(held == 2624);
  void* e = small_block_alloc(kSmallBlockMaxBytes, held);
  REQUIRE(e != nullptr);
  CHECK(held == kSmallBlockMaxBytes);
  std::memset(e, 0xff, kSmallBlockMaxBytes);  // the whole block is usable
  CHECK(reinterpret_cast<uintptr_t>(d) % 64 == 0);
  CHECK(reinterpret_cast<uintptr_t>(e) % 64 == 0);
  for (void* p : {c, d, e}) small_block_free(p);

  CHECK(small_block_alloc(0, held) == nullptr);
  CHECK(small_block_alloc(kSmallBlockMaxBytes + 1, held) == nullptr);
}

TEST_CASE("small blocks: many blocks of a class are distinct and come back") {
  size_t held = 0;
  std::vector<void*> blocks;
  std::set<void*> distinct;
  for (int i = 0; i < 1000; ++i) {  // several slabs
    blocks.push_back(small_block_alloc(200, held));
    REQUIRE(blocks.back() != nullptr);
    std::memset(blocks.back(), i & 0xff, 200);
    distinct.insert(blocks.back());
  }
  CHECK(distinct.size() == blocks.size());
  for (int i = 0; i < 1000; ++i) {  // writing one block did not touch another
    CHECK(static_cast<unsigned char*>(blocks[i])[199] == (i & 0xff));
  }
  for (void* p : blocks) small_block_free(p);
  std::set<void*> again;  // the same memory is handed out again, no new slab
  for (int i = 0; i < 1000; ++i) again.insert(small_block_alloc(200, held));
  CHECK(again == distinct);
  for (void* p : again) small_block_free(p);
}

TEST_CASE("small blocks: threads allocate and free the same classes") {
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &failures] {
      size_t held = 0;
      std::vector<unsigned char*> mine;
      for (int round = 0; round < 200; ++round) {
        for (int i = 0; i < 50; ++i) {
          auto* p = static_cast<unsigned char*>(small_block_alloc(100 + 64 * (i % 4), held));
          if (!p) {
            ++failures[t];
            continue;
          }
          p[0] = static_cast<unsigned char>(t);
          mine.push_back(p);
        }
        for (auto* p : mine) {
          if (p[0] != t) ++failures[t];  // another thread was handed the same block
          small_block_free(p);
        }
        mine.clear();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(failures == std::vector<int>(4, 0));
}

TEST_CASE("small blocks: small CPU tensors take them and are counted by size class") {
  configure_allocator(AllocatorPolicy::kCaching);
  const int64_t before = cpu_tensor_bytes();
  {
    auto small = torch::zeros({64, 10});  // 2,560 bytes
    CHECK(is_small_block(small.data_ptr()));
    CHECK(cpu_tensor_bytes() - before == 2560);
    auto odd = torch::zeros({3}, torch::kUInt8);
    CHECK(cpu_tensor_bytes() - before == 2560 + 64);
    auto large = torch::zeros({1025});  // 4,100 bytes: from malloc
    CHECK_FALSE(is_small_block(large.data_ptr()));
    CHECK(reinterpret_cast<uintptr_t>(large.data_ptr()) % 64 == 0);
    CHECK((small + 1).sum().item<double>() == 640);
  }
  CHECK(cpu_tensor_bytes() == before);
}
