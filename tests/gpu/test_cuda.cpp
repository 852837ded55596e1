// What runs on a CUDA device and has no CPU analogue: the device's facts, its memory figures,
// the settings of its backends, and a benchmark point's step against the same step on the CPU.
#include <doctest/doctest.h>

#include <ATen/Context.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>

#include <map>

#include "engine/bench/point.hpp"
#include "engine/core/device_memory.hpp"
#include "engine/core/device_settings.hpp"
#include "engine/core/gpu_facts.hpp"

using namespace engine;

namespace {

const torch::Device kCuda(torch::kCUDA, 0);

nn::Model small_mlp() {
  torch::nn::Sequential seq(torch::nn::Flatten(), torch::nn::Linear(12, 16), torch::nn::ReLU(),
                            torch::nn::Linear(16, 4), torch::nn::LogSoftmax(1));
  return nn::Model{seq.ptr(), [seq](const torch::Tensor& x) mutable { return seq->forward(x); }};
}

}  // namespace

TEST_CASE("a CUDA device's facts: name, memory and the versions of its libraries") {
  std::map<std::string, std::string> facts;
  for (const auto& [name, value] : core::gpu_facts(kCuda)) facts[name] = value;
  for (const char* name :
       {"gpu_name", "gpu_memory_bytes", "gpu_driver", "cuda_runtime", "cudnn", "nccl"}) {
    CHECK_MESSAGE(facts.count(name) == 1, name);
  }
  CHECK(!facts["gpu_name"].empty());
  CHECK(std::stoll(facts["gpu_memory_bytes"]) > (int64_t{1} << 30));
  CHECK(facts["cuda_runtime"].find('.') != std::string::npos);
  CHECK(facts["cudnn"] != "none");  // every CUDA libtorch PyTorch ships has cuDNN
}

TEST_CASE("peak device memory counts what the caching allocator handed out") {
  const auto before = core::peak_device_bytes(kCuda);
  auto block = torch::empty({64, 1024, 1024}, torch::TensorOptions().device(kCuda));
  CHECK(core::peak_device_bytes(kCuda) >= before);
  CHECK(core::peak_device_bytes(kCuda) >= 64 * 1024 * 1024 * 4);
}

TEST_CASE("device settings reach the CUDA backends") {
  core::DeviceSettings settings;
  settings.cudnn_benchmark = false;
  settings.tf32 = true;
  core::apply_device_settings(settings);
  CHECK_FALSE(at::globalContext().benchmarkCuDNN());
  CHECK(at::globalContext().allowTF32CuBLAS());
  settings.cudnn_benchmark = true;
  settings.tf32 = false;
  core::apply_device_settings(settings);
  CHECK(at::globalContext().benchmarkCuDNN());
  CHECK_FALSE(at::globalContext().allowTF32CuDNN());
}

TEST_CASE("a training point on CUDA takes the CPU's step, within float rounding") {
  bench::PointOptions options;
  options.input_shape = {3, 4};
  options.classes = 4;
  options.batch_size = 8;
  options.warmup_batches = 1;
  options.batches = 3;
  options.phase = bench::Phase::kTraining;
  torch::manual_seed(7);
  auto on_cpu = small_mlp();
  torch::manual_seed(7);
  auto on_gpu = small_mlp();
  options.device = torch::Device(torch::kCPU);
  torch::manual_seed(3);
  bench::run_point(on_cpu, options);
  options.device = kCuda;
  torch::manual_seed(3);
  const auto result = bench::run_point(on_gpu, options);
  CHECK(result.peak_device_bytes > 0);
  const auto cpu = on_cpu.module->parameters();
  const auto gpu = on_gpu.module->parameters();
  REQUIRE(cpu.size() == gpu.size());
  for (size_t i = 0; i < cpu.size(); ++i) {
    CHECK(torch::allclose(cpu[i], gpu[i].cpu(), 1e-4, 1e-5));
  }
}
