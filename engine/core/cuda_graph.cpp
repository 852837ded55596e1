#include "engine/core/cuda_graph.hpp"

#include <ATen/autocast_mode.h>

#include "engine/core/errors.hpp"

// Defined by CMake for this file alone when the libtorch found has CUDA, as for
// core/device_memory.cpp (a definition on every file would make the shared PCH unusable).
#ifdef ENGINE_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGeneratorImpl.h>  // completes the generator state CUDAGraph holds (2.x)
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/version.h>

#include <map>
#include <mutex>
#endif

namespace engine::core {

struct CudaGraph::Impl {
  // built in place: libtorch 2.x's CUDAGraph can be neither copied nor moved
  Impl(const c10::Device& device, bool stand_in) : device(device), stand_in(stand_in) {}

  c10::Device device;
  bool stand_in;
  std::function<void()> work;  // the stand-in's "graph"
#ifdef ENGINE_WITH_CUDA
  at::cuda::CUDAGraph graph;
#endif
};

#ifdef ENGINE_WITH_CUDA
namespace {

// One side stream per device for every recording, as torch.cuda.graph keeps one: a stream from
// the pool for each capture would give each graph's memory and the libraries' per-stream state
// (cuBLAS workspaces) a stream of their own.
c10::cuda::CUDAStream capture_stream(c10::DeviceIndex device) {
  static std::mutex guard;
  static std::map<c10::DeviceIndex, c10::cuda::CUDAStream> streams;
  const std::lock_guard<std::mutex> lock(guard);
  auto found = streams.find(device);
  if (found == streams.end()) {
    found = streams.emplace(device, c10::cuda::getStreamFromPool(false, device)).first;
  }
  return found->second;
}

}  // namespace
#endif

bool CudaGraph::supported() {
#ifdef ENGINE_WITH_CUDA
  return true;
#else
  return false;
#endif
}

CudaGraph::CudaGraph(const c10::Device& device, bool stand_in)
    : impl_(std::make_unique<Impl>(device, stand_in)) {
  if (stand_in) return;
  if (!device.is_cuda()) {
    throw UsageError("cuda_graphs needs a CUDA device (--device cuda), not " + device.str());
  }
  if (!supported()) {
    throw UsageError("cuda_graphs needs the engine built against a libtorch with CUDA");
  }
}

CudaGraph::~CudaGraph() = default;

void CudaGraph::capture(const std::function<void()>& warm_up, const std::function<void()>& work) {
  if (impl_->stand_in) {
    warm_up();
    impl_->work = work;
    return;
  }
#ifdef ENGINE_WITH_CUDA
  const c10::cuda::CUDAGuard on_device(impl_->device);
  const auto current = c10::cuda::getCurrentCUDAStream();
  const auto side = capture_stream(impl_->device.has_index() ? impl_->device.index()
                                                             : c10::cuda::current_device());
  at::cuda::CUDAEvent queued;
  queued.record(current);
  queued.block(side);
  {
    const c10::cuda::CUDAStreamGuard on_side(side);
    warm_up();
    side.synchronize();  // the warm-up's kernels done before recording starts, as PyTorch does
    const bool cache = at::autocast::is_autocast_cache_enabled();
    at::autocast::set_autocast_cache_enabled(false);
    struct RestoreCache {
      bool cache;
      ~RestoreCache() { at::autocast::set_autocast_cache_enabled(cache); }
    } restore{cache};
#if TORCH_VERSION_MAJOR >= 2
    // this thread's capture only: the loader's threads may pin memory (cudaHostAlloc) meanwhile,
    // which global capture mode would turn into an error of the recording
    impl_->graph.capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
#else
    impl_->graph.capture_begin();  // 1.13 captures in global mode only
#endif
    try {
      work();
    } catch (...) {
      try {
        impl_->graph.capture_end();  // ends the stream's capture mode before the error goes on
      } catch (...) {
      }
      throw;
    }
    impl_->graph.capture_end();
  }
  at::cuda::CUDAEvent recorded;
  recorded.record(side);
  recorded.block(current);
#else
  (void)warm_up;
  (void)work;
#endif
}

void CudaGraph::replay() {
  if (impl_->stand_in) {
    impl_->work();
    return;
  }
#ifdef ENGINE_WITH_CUDA
  impl_->graph.replay();
#endif
}

}  // namespace engine::core
