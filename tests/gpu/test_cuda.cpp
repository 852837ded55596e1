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
#include "engine/data/device_prefetcher.hpp"
#include "engine/data/loader.hpp"
#include "engine/data/pipeline.hpp"
#include "engine/data/source.hpp"
#include "engine/train/adadelta.hpp"
#include "engine/train/adam.hpp"
#include "engine/train/precision.hpp"
#include "engine/train/sgd.hpp"
#include "engine/train/trainer.hpp"
#include "tests/train/blob_spec.hpp"

using namespace engine;

namespace {

const torch::Device kCuda(torch::kCUDA, 0);

// A training point of small_mlp's shapes: batches of `batch`, `batches` timed after `warmup`.
bench::PointOptions small_point(int64_t batch, int64_t warmup, int64_t batches) {
  bench::PointOptions options;
  options.input_shape = {3, 4};
  options.classes = 4;
  options.batch_size = batch;
  options.warmup_batches = warmup;
  options.batches = batches;
  options.phase = bench::Phase::kTraining;
  options.device = kCuda;
  return options;
}

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
  auto options = small_point(8, 1, 3);
  torch::manual_seed(7);
  auto on_cpu = small_mlp();
  torch::manual_seed(7);
  auto on_gpu = small_mlp();
  // on CUDA the parts of a step are timed in as many batches again after the timed ones: the
  // CPU takes the same 7 steps of the same batch as 4 warm-up batches and 3 timed ones
  options.device = torch::Device(torch::kCPU);
  options.warmup_batches = 4;
  torch::manual_seed(3);
  bench::run_point(on_cpu, options);
  options.device = kCuda;
  options.warmup_batches = 1;
  torch::manual_seed(3);
  const auto result = bench::run_point(on_gpu, options);
  CHECK(result.peak_device_bytes > 0);
  const auto cpu = on_cpu.module->parameters();
  const auto gpu = on_gpu.module->parameters();
  REQUIRE(cpu.size() == gpu.size());
  for (size_t i = 0; i < cpu.size(); ++i) {
    CAPTURE((cpu[i] - gpu[i].cpu()).abs().max().item<double>());
    CHECK(torch::allclose(cpu[i], gpu[i].cpu(), 1e-4, 1e-5));
  }
}

namespace {

// The same parameters on the CPU and on the GPU, with the same gradients.
std::pair<std::vector<torch::Tensor>, std::vector<torch::Tensor>> twin_parameters() {
  torch::manual_seed(12);
  std::vector<torch::Tensor> cpu, gpu;
  for (const auto& shape : std::vector<std::vector<int64_t>>{{5}, {64, 33}, {70001}}) {
    cpu.push_back(torch::randn(shape).requires_grad_());
    gpu.push_back(cpu.back().detach().to(kCuda).requires_grad_());
  }
  return {cpu, gpu};
}

void twin_gradients(std::vector<torch::Tensor>& cpu, std::vector<torch::Tensor>& gpu, int step) {
  torch::manual_seed(100 + step);
  for (size_t i = 0; i < cpu.size(); ++i) {
    const auto g = torch::randn(cpu[i].sizes());
    cpu[i].mutable_grad() = g.clone();
    gpu[i].mutable_grad() = g.to(kCuda);
  }
}

void check_twins(const std::vector<torch::Tensor>& cpu, const std::vector<torch::Tensor>& gpu) {
  for (size_t i = 0; i < cpu.size(); ++i) {
    CHECK(torch::allclose(cpu[i], gpu[i].cpu(), 1e-5, 1e-6));
  }
}

// Steps an optimizer of each kind on both devices: the GPU's multi-tensor step against the
// CPU's per-parameter one.
template <class Optimizer, class Options>
void compare_on_devices(const Options& options) {
  auto [cpu, gpu] = twin_parameters();
  Optimizer on_cpu(cpu, options), on_gpu(gpu, options);
  for (int step = 0; step < 3; ++step) {
    twin_gradients(cpu, gpu, step);
    on_cpu.step();
    on_gpu.step();
  }
  check_twins(cpu, gpu);
}

}  // namespace

TEST_CASE("multi-tensor optimizer steps on CUDA match the per-parameter steps on the CPU") {
  compare_on_devices<train::FusedSGD>(torch::optim::SGDOptions(0.05).momentum(0.9).nesterov(true));
  compare_on_devices<train::FusedSGD>(torch::optim::SGDOptions(0.05).weight_decay(1e-3));
  compare_on_devices<train::Adadelta>(train::AdadeltaOptions(1.0).weight_decay(1e-2));
  compare_on_devices<train::FusedAdam>(torch::optim::AdamOptions(1e-2).amsgrad(true));
  compare_on_devices<train::FusedAdamW>(torch::optim::AdamWOptions(1e-2));
}

TEST_CASE("the loss scaler unscales CUDA gradients with one multi-tensor kernel") {
  auto [cpu, gpu] = twin_parameters();
  twin_gradients(cpu, gpu, 0);
  train::GradScaler on_cpu(1024, 2, 0.5, 10), on_gpu(1024, 2, 0.5, 10);
  CHECK(on_cpu.unscale(cpu));
  CHECK(on_gpu.unscale(gpu));
  for (size_t i = 0; i < cpu.size(); ++i) {
    CHECK(torch::allclose(cpu[i].grad(), gpu[i].grad().cpu(), 1e-6, 1e-9));
  }
  gpu[1].mutable_grad()[3][4] = std::numeric_limits<float>::infinity();
  CHECK_FALSE(on_gpu.unscale(gpu));  // an overflow anywhere is found
}

TEST_CASE("pinned batches reach the GPU through the side stream, in order and intact") {
  torch::manual_seed(8);
  auto source = std::make_shared<data::TensorSource>(torch::randn({203, 16}),
                                                     torch::arange(203) % 7, "numbers");
  const auto pipeline = data::Pipeline(source).shuffle().batch(32);
  data::EpochReader direct(pipeline, 4, 0);
  data::EpochReader pinned(pipeline, 4, 0, 0, /*pin_memory=*/true);
  data::DevicePrefetcher prefetched([&] { return pinned.next(); }, kCuda);
  int batches = 0;
  while (auto expected = direct.next()) {
    auto got = prefetched.next();
    REQUIRE(got);
    CHECK(got->input.device() == kCuda);
    // work on the consumer's stream right away: it must see the finished copy
    CHECK(torch::equal(expected->input, (got->input * 1).cpu()));
    CHECK(torch::equal(expected->target, got->target.cpu()));
    ++batches;
  }
  CHECK_FALSE(prefetched.next());
  CHECK(batches == 7);
}

namespace {

// blob_spec's run on the GPU (batches of 30: an epoch's last one of 16 runs eagerly between
// replays), eager or with its step recorded as a CUDA graph.
std::vector<double> blob_losses_on_gpu(bool graphs, const std::string& precision,
                                       double dropout = 0) {
  auto spec = engine::test::blob_spec(21, dropout, false, 30);
  spec.model.module->to(kCuda);
  spec.device = kCuda;
  // optim.SGD's own multi-tensor step, which a graph can record (libtorch's SGD is refused)
  spec.optimizer = std::make_shared<train::FusedSGD>(spec.model.module->parameters(),
                                                     torch::optim::SGDOptions(0.05).momentum(0.9));
  spec.options.cuda_graphs = graphs;
  spec.options.precision = train::parse_precision(precision);
  engine::test::Recorder recorder;
  train::Trainer(spec, {&recorder}).run();
  std::vector<double> losses;
  for (const auto& row : recorder.series()) losses.push_back(std::get<3>(row).at("loss"));
  return losses;
}

}  // namespace

TEST_CASE("a training run recorded as a CUDA graph follows the eager run") {
  for (const char* precision : {"float32", "bfloat16", "float16"}) {  // float16: scaler inside
    CAPTURE(precision);
    const auto eager = blob_losses_on_gpu(false, precision);
    const auto graphed = blob_losses_on_gpu(true, precision);
    REQUIRE(eager.size() == graphed.size());
    REQUIRE(eager.size() > 10);
    // the same kernels: equal up to the order of floating-point reductions
    for (size_t i = 0; i < eager.size(); ++i) {
      CHECK(graphed[i] == doctest::Approx(eager[i]).epsilon(1e-3));
    }
  }
  // dropout inside the graph draws new masks at every replay (the graph-safe generator)
  const auto with_dropout = blob_losses_on_gpu(true, "float32", 0.2);
  CHECK(with_dropout.back() < with_dropout.front() * 0.5);
}

TEST_CASE("engine bench's training point with cuda_graphs replays the step") {
  auto options = small_point(16, 3, 20);
  options.cuda_graphs = true;
  auto model = small_mlp();
  const auto before = model.module->parameters()[0].detach().cpu().clone();
  const auto result = bench::run_point(model, options);
  CHECK(result.batch_ms.size() == 20);
  CHECK(result.part_ms.empty());  // one launch a step: no parts
  CHECK_FALSE(torch::equal(before, model.module->parameters()[0].detach().cpu()));
}

TEST_CASE("float16 with master weights (DLBS's float16) trains a float16 model") {
  auto options = small_point(16, 2, 5);
  options.precision = train::Precision::kFloat16Master;
  auto model = small_mlp();
  const auto result = bench::run_point(model, options);
  CHECK(result.batch_ms.size() == 5);
  CHECK((model.module->parameters()[0].scalar_type() == torch::kHalf));
}

TEST_CASE("Adadelta's step counts stay right when its step is replayed from a graph") {
  auto spec = engine::test::blob_spec(4, 0, false, 30);
  spec.model.module->to(kCuda);
  spec.device = kCuda;
  spec.optimizer =
      std::make_shared<train::Adadelta>(spec.model.module->parameters(), train::AdadeltaOptions());
  spec.optimizer_name = "Adadelta";
  spec.options.cuda_graphs = true;
  train::Trainer trainer(spec, {});
  const auto result = trainer.run();
  for (auto& [key, state] : spec.optimizer->state()) {
    CHECK(static_cast<train::AdadeltaParamState&>(*state).step() == result.steps);
  }
}
