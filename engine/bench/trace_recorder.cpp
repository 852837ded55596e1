#include "engine/bench/trace_recorder.hpp"

#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/csrc/autograd/profiler_legacy.h>

#include <set>

#include "engine/core/log.hpp"

namespace engine::bench {
namespace profiler = torch::autograd::profiler;

TraceRecorder::TraceRecorder(std::string path, const torch::Device& device)
    : path_(std::move(path)) {
  if (device.is_cuda()) {
    const torch::profiler::impl::ProfilerConfig config(
        torch::profiler::impl::ProfilerState::KINETO);
    const std::set<torch::profiler::impl::ActivityType> activities = {
        torch::profiler::impl::ActivityType::CPU, torch::profiler::impl::ActivityType::CUDA};
    profiler::prepareProfiler(config, activities);
    profiler::enableProfiler(config, activities);
    kineto_ = true;
    return;
  }
  cpu_ = std::make_unique<profiler::RecordProfile>(path_);
}

TraceRecorder::~TraceRecorder() {
  if (!kineto_) return;  // cpu_'s destructor writes its trace
  try {
    auto result = profiler::disableProfiler();
    if (result) result->save(path_);
  } catch (const std::exception& e) {
    core::log::warn("--profile: the trace could not be written to {}: {}", path_, e.what());
  }
}

}  // namespace engine::bench
