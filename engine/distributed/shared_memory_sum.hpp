// The gradient all-reduce of ranks that all run on one machine, through one shared-memory
// segment instead of Gloo's TCP loopback: each rank copies its bucket into its slot, each sums
// its share of the elements over every slot (in rank order) into a result, and each copies the
// result back. Two waits per bucket, no socket, no kernel copy, no transport thread: on a
// machine whose cores all compute, Gloo's loopback transport waits for a core at every message
// and the step grows by several times its bytes' copy (docs/performance.md, issue 61).
//
// A rank that waits longer than the world's timeout, or whose peer process ended, throws
// (naming the rank it waited for) and marks the segment failed, so that the others end too.
#pragma once

#include <torch/types.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

namespace engine::distributed {

class Group;

class SharedMemorySum {
 public:
  // Collective: every rank of the group calls it with the same `bytes` (the largest tensor it
  // will average). A sum over one shared segment when the device is the CPU and every rank of
  // the world runs on this machine (the group found one host for all) and every rank could map
  // the segment (/dev/shm has the room: it is reserved now, never on first touch); nothing, on
  // every rank alike, otherwise (Gloo then carries the gradients).
  static std::unique_ptr<SharedMemorySum> open(Group& group, size_t bytes);
  ~SharedMemorySum();
  SharedMemorySum(const SharedMemorySum&) = delete;
  SharedMemorySum& operator=(const SharedMemorySum&) = delete;

  // flat (a contiguous float or double tensor of at most `bytes`, on the CPU) becomes the mean
  // over the ranks: each rank's tensor divided by the world's size, then summed in rank order,
  // the same value on every rank. Throws std::runtime_error when a rank does not come.
  void average(torch::Tensor& flat);
  // flat becomes the sum over the ranks, in rank order (SyncBatchNorm's statistics).
  void sum(torch::Tensor& flat);
  // Whether `sum` and `average` take this tensor: contiguous float or double on the CPU, no
  // larger than a slot. The same answer on every rank for tensors of the same shape.
  bool fits(const torch::Tensor& flat) const;

 private:
  SharedMemorySum(int rank, int size, std::chrono::milliseconds timeout, void* mapping,
                  size_t mapping_bytes, size_t slot_bytes);
  std::byte* slot(int rank) const;
  void reduce(torch::Tensor& flat);
  std::byte* result() const { return slot(size_); }
  void arrive(const char* waiting_for);
  void check_peers(const char* waiting_for);
  void stop_if_failed() const;
  [[noreturn]] void give_up(const std::string& why);

  int rank_;
  int size_;
  std::chrono::milliseconds timeout_;
  void* mapping_;
  size_t mapping_bytes_;
  size_t slot_bytes_;
  std::byte* data_;
  bool peers_visible_ = true;  // one PID namespace: a peer's process can be looked up
};

}  // namespace engine::distributed
