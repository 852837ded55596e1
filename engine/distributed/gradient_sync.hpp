// Gradients averaged over the ranks the way PyTorch's DistributedDataParallel does it, by its
// own C++ engine, c10d::Reducer: parameters grouped into buckets (about 25 MB, the first one
// small, in the reverse order of the model so that the last layers' gradients, ready first, go
// first), each bucket all-reduced from autograd's hooks as soon as its gradients are ready, so
// that communication overlaps the rest of the backward pass.
#pragma once

#include <torch/types.h>

#include <memory>
#include <vector>

#include "engine/distributed/group.hpp"

namespace c10d {
class Reducer;
}

namespace engine::distributed {

class SharedMemorySum;

struct GradientSyncOptions {
  int64_t bucket_bytes = 25 << 20;      // DDP's bucket_cap_mb = 25
  bool find_unused_parameters = false;  // DDP's option: parameters a step may leave unused
  // Ranks that all run on one machine (CPU) average through a shared-memory segment, in one
  // bucket, rather than through Gloo's loopback (SharedMemorySum); false keeps Gloo.
  bool shared_memory = true;
};

class GradientSync {
 public:
  // parameters: the model's (those without requires_grad are left out); buffers: broadcast
  // from rank 0 before each forward (BatchNorm's running statistics), as DDP does by default.
  // Checks first that every rank holds parameters of the same shapes.
  GradientSync(Group& group, std::vector<torch::Tensor> parameters,
               std::vector<torch::Tensor> buffers, GradientSyncOptions options = {});
  ~GradientSync();
  GradientSync(const GradientSync&) = delete;
  GradientSync& operator=(const GradientSync&) = delete;

  // Before a forward: rank 0's buffers to every rank; after the first step, the buckets
  // rebuilt once in the order the gradients came.
  void before_forward();
  // The next backward from `loss` all-reduces the gradients (averaged over the ranks).
  // Backward passes without this call (the first batches of an accumulation group) keep their
  // gradients local, as DDP's no_sync().
  void before_backward(const torch::Tensor& loss);
  // The machine's shared segment, for other sums of the same ranks (SyncBatchNorm); null when
  // the gradients go through Gloo.
  SharedMemorySum* local_sum() const { return local_sum_.get(); }

 private:
  Group& group_;
  std::vector<torch::Tensor> buffers_;
  std::unique_ptr<SharedMemorySum> local_sum_;  // outlives the reducer, whose hook uses it
  std::unique_ptr<c10d::Reducer> reducer_;
};

}  // namespace engine::distributed
