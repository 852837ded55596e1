// engine bench --profile: a Chrome trace of the timed batches, from libtorch's profiler.
#pragma once

#include <torch/types.h>

#include <memory>
#include <string>

namespace torch::autograd::profiler {
struct RecordProfile;
}

namespace engine::bench {

// Records from construction to destruction, then writes the trace to `path`. On CUDA through
// libtorch's Kineto profiler with CPU and CUDA activities (the kernels on the device's timeline,
// as torch.profiler shows them); on the CPU through its legacy profiler, as before.
class TraceRecorder {
 public:
  TraceRecorder(std::string path, const torch::Device& device);
  ~TraceRecorder();
  TraceRecorder(const TraceRecorder&) = delete;
  TraceRecorder& operator=(const TraceRecorder&) = delete;

 private:
  std::string path_;
  std::unique_ptr<torch::autograd::profiler::RecordProfile> cpu_;
  bool kineto_ = false;
};

}  // namespace engine::bench
