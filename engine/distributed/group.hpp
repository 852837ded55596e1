// The processes of one job joined into a c10d process group: rank 0 serves c10d's TCPStore at
// MASTER_ADDR:MASTER_PORT, every rank checks there that all agree on the world, then
// ProcessGroupGloo (CPU) or ProcessGroupNCCL (CUDA devices, when this libtorch has NCCL) is
// built on the store. Collectives wait for their result; any failure (a rank that died, one
// that cannot be reached, the timeout) is a DistributedError naming this rank and the
// operation, never a hang past the timeout.
#pragma once

#include <torch/types.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/distributed/heartbeat.hpp"
#include "engine/distributed/world.hpp"

namespace c10d {
class ProcessGroup;
class Store;
}  // namespace c10d

namespace engine::distributed {

class Group {
 public:
  // Joins the world (blocks until every rank has joined, or the world's timeout).
  Group(World world, torch::Device device);
  ~Group();
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;

  // The world as joined: the local rank and size found from the ranks' hosts where the
  // scheduler did not say them.
  const World& world() const { return world_; }
  // This rank's device: cuda without an index became this machine's GPU LOCAL_RANK.
  torch::Device device() const { return device_; }
  int rank() const { return world_.rank; }
  int size() const { return world_.size; }
  bool leader() const { return world_.rank == 0; }
  // libtorch's process group, for c10d::Reducer.
  const c10::intrusive_ptr<c10d::ProcessGroup>& backend() const { return backend_; }

  // rank 0's tensors to everyone, in place (coalesced into few messages).
  void broadcast(const std::vector<torch::Tensor>& tensors);
  // Element-wise sum (or maximum) over the ranks, in place.
  void all_reduce(torch::Tensor& tensor, bool maximum = false);
  std::vector<double> sum(const std::vector<double>& values);
  std::vector<double> max(const std::vector<double>& values);
  void barrier();
  // The value rank 0 gives, on every rank (a seed, a run file's path), through the store.
  std::string share(const std::string& value_on_rank0);

  // "rank 1 of 2: all-reduce failed: ...; rank 0 stopped answering (...)": what the guarded
  // collectives throw. Takes a few seconds: it watches the other ranks' heartbeats to name
  // the ranks that are gone.
  [[noreturn]] void fail(const std::string& operation, const std::exception& cause) const;

 private:
  void join();
  void find_locality();
  c10::intrusive_ptr<c10d::Store> open_store(bool serve) const;
  std::string who_is_gone() const;
  template <typename Fn>
  void guarded(const std::string& operation, Fn&& fn);

  World world_;
  torch::Device device_;
  c10::intrusive_ptr<c10d::Store> store_;
  c10::intrusive_ptr<c10d::ProcessGroup> backend_;
  std::unique_ptr<Heartbeat> heartbeat_;
  int64_t shares_ = 0;
};

}  // namespace engine::distributed
