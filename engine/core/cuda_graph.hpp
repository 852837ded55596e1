// One piece of GPU work captured once as a CUDA graph and replayed (at::cuda::CUDAGraph):
// the kernels of a whole training step launched with one call, instead of one launch each.
#pragma once

#include <c10/core/Device.h>

#include <functional>
#include <memory>

namespace engine::core {

class CudaGraph {
 public:
  // Whether this build can capture graphs (it was built against a libtorch with CUDA).
  static bool supported();

  // stand_in: on a device without graphs (the CPU), capture() runs `warm_up` and remembers
  // `work`, and replay() runs `work` again: the caller's bookkeeping (static tensors, step
  // counts, when to capture again) can then be tested where there is no GPU. Otherwise the
  // device must be a CUDA device of a build that supports() graphs (a UsageError says so).
  CudaGraph(const c10::Device& device, bool stand_in = false);
  ~CudaGraph();
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;

  // On a stream of its own: runs `warm_up` (eagerly: a real step, which also brings the
  // libraries' lazy state for that stream into being), then records `work` as the graph
  // without running it. The current stream waits for the side stream before and after, as
  // torch.cuda.graph does. Autocast's cast cache is off while recording (cached casts would be
  // the recorded ones). `work` must make no host synchronisation.
  void capture(const std::function<void()>& warm_up, const std::function<void()>& work);
  // Launches the recorded work on the current stream.
  void replay();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace engine::core
