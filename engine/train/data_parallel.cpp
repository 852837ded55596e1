#include "engine/train/data_parallel.hpp"

#include <functional>

#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"
#include "engine/distributed/shared_memory_sum.hpp"
#include "engine/nn/parameter_slots.hpp"

namespace engine::train {
namespace {

std::vector<torch::Tensor> buffers_of(torch::nn::Module& module) {
  std::vector<torch::Tensor> out;
  for (auto& b : module.buffers()) {
    if (b.defined()) out.push_back(b);
  }
  return out;
}

// A number that tells metric-name lists apart, exact in a double.
double fingerprint(const std::vector<std::string>& names) {
  constexpr uint64_t kExactInDouble = (uint64_t{1} << 52) - 1;
  return static_cast<double>(std::hash<std::string>{}(core::join(names)) & kExactInDouble);
}

}  // namespace

DataParallel::DataParallel(distributed::Group& group, TrainSpec& spec)
    : group_(group), spec_(spec) {
  if (spec_.train_data) spec_.train_data = spec_.train_data->training_share(rank(), size());
  if (spec_.validation_data) {
    spec_.validation_data = spec_.validation_data->evaluation_share(rank(), size());
  }
  parameters_ = nn::unique_parameters(*spec_.model.module);
  sync_ = std::make_unique<distributed::GradientSync>(group_, parameters_,
                                                      buffers_of(*spec_.model.module));
  // SyncBatchNorm's small sums, many a step, through the machine's shared segment when the
  // gradients take it (Gloo's latency is milliseconds a sum on busy cores); Gloo otherwise
  distributed::SharedMemorySum* local = sync_->local_sum();
  const nn::ProcessSum processes{rank(), size(), [this, local](torch::Tensor& t) {
                                   if (!local || !local->fits(t)) return group_.all_reduce(t);
                                   try {
                                     local->sum(t);
                                   } catch (const std::exception& e) {
                                     group_.fail("the SyncBatchNorm statistics' sum", e);
                                   }
                                 }};
  for (const auto& module : spec_.model.module->modules()) {
    auto batchnorm = std::dynamic_pointer_cast<nn::BatchNormImpl>(module);
    if (!batchnorm) continue;
    if (spec_.options.sync_batchnorm || batchnorm->kind() == nn::BatchNormKind::kSync) {
      batchnorm->synchronise(processes);
      synchronised_.push_back(batchnorm);
    }
  }
}

// The model outlives the group: its layers must not call it afterwards.
DataParallel::~DataParallel() {
  for (auto& batchnorm : synchronised_) batchnorm->disconnect();
}

void DataParallel::broadcast_model() {
  torch::NoGradGuard no_grad;
  auto tensors = parameters_;
  for (auto& b : buffers_of(*spec_.model.module)) tensors.push_back(b);
  group_.broadcast(tensors);
}

void DataParallel::before_forward() {
  sync_->before_forward();
}

void DataParallel::backward(const torch::Tensor& loss, bool synchronise) {
  if (synchronise) sync_->before_backward(loss);
  try {
    loss.backward();
  } catch (const core::Error&) {
    throw;
  } catch (const std::exception& e) {
    if (!synchronise) throw;
    group_.fail("the gradient all-reduce", e);
  }
}

void DataParallel::backward_nothing() {
  torch::Tensor zero;
  for (const auto& p : parameters_) {
    if (!p.requires_grad()) continue;
    auto term = (p * 0).sum();
    zero = zero.defined() ? zero + term : term;
  }
  backward(zero, true);
}

void DataParallel::reduce(MetricAccumulator& metrics) {
  auto sums = metrics.sums();
  auto counts = metrics.counts();
  std::vector<std::string> names;
  for (const auto& [name, value] : sums) names.push_back(name);
  const double mark = fingerprint(names);
  const double classes = counts.defined() ? static_cast<double>(counts.size(1)) : 0;
  const auto agreed = group_.max({mark, -mark, classes});
  if (agreed[0] != -agreed[1]) {
    throw core::UsageError("the ranks measured different metrics (rank " + std::to_string(rank()) +
                           ": " + core::join(names) +
                           "): a hook must log the same names on every rank");
  }
  std::vector<double> values{static_cast<double>(metrics.samples())};
  for (const auto& name : names) values.push_back(sums[name]);
  values = group_.sum(values);
  for (size_t i = 0; i < names.size(); ++i) sums[names[i]] = values[i + 1];
  const auto width = static_cast<int64_t>(agreed[2]);
  if (width > 0) {
    auto all = torch::zeros({3, width}, torch::TensorOptions().dtype(torch::kFloat64));
    if (counts.defined()) all.narrow(1, 0, counts.size(1)).copy_(counts.to(torch::kCPU));
    group_.all_reduce(all);
    counts = all;
  }
  metrics.restore(std::move(sums), static_cast<int64_t>(values[0]), counts);
}

std::vector<double> DataParallel::maximum(const std::vector<double>& values) {
  return group_.max(values);
}

std::vector<double> DataParallel::sum(const std::vector<double>& values) {
  return group_.sum(values);
}

void DataParallel::barrier() {
  group_.barrier();
}

}  // namespace engine::train
