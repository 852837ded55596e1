#include "engine/train/metrics.hpp"

#include "engine/core/errors.hpp"

namespace engine::train {
namespace {

// "top5" -> 5; 0 for anything that is not top<k>.
int64_t topk_of(const std::string& name) {
  if (name.size() < 4 || name.compare(0, 3, "top") != 0) return 0;
  const std::string digits = name.substr(3);
  if (digits.find_first_not_of("0123456789") != std::string::npos) return 0;
  return std::stoll(digits);
}

}  // namespace

double accuracy(const torch::Tensor& output, const torch::Tensor& target) {
  if (target.numel() == 0) return 0;
  return output.argmax(1).eq(target).sum().item<double>() / static_cast<double>(target.numel());
}

double topk_accuracy(const torch::Tensor& output, const torch::Tensor& target, int64_t k) {
  if (target.numel() == 0) return 0;
  k = std::min<int64_t>(k, output.size(1));
  auto top = std::get<1>(output.topk(k, 1));
  return top.eq(target.unsqueeze(1)).any(1).sum().item<double>() /
         static_cast<double>(target.numel());
}

void check_metric_name(const std::string& name) {
  if (name == "accuracy" || topk_of(name) > 0) return;
  throw core::UsageError("unknown metric '" + name + "' (known: accuracy, top<k> such as top5)");
}

MetricAccumulator::MetricAccumulator(std::vector<std::string> metrics)
    : metrics_(std::move(metrics)) {
  for (const auto& m : metrics_) check_metric_name(m);
}

std::map<std::string, double> MetricAccumulator::evaluate(double loss, const torch::Tensor& output,
                                                          const torch::Tensor& target) const {
  std::map<std::string, double> values{{"loss", loss}};
  for (const auto& m : metrics_) {
    const int64_t k = topk_of(m);
    values[m] = k > 0 ? topk_accuracy(output, target, k) : accuracy(output, target);
  }
  return values;
}

void MetricAccumulator::add(const std::map<std::string, double>& values, int64_t samples) {
  for (const auto& [name, value] : values) sums_[name] += value * static_cast<double>(samples);
  samples_ += samples;
}

void MetricAccumulator::add(double loss, const torch::Tensor& output, const torch::Tensor& target) {
  add(evaluate(loss, output, target), target.defined() && target.dim() > 0 ? target.size(0) : 1);
}

double MetricAccumulator::average(const std::string& name) const {
  auto it = sums_.find(name);
  return samples_ == 0 || it == sums_.end() ? 0.0 : it->second / static_cast<double>(samples_);
}

std::map<std::string, double> MetricAccumulator::averages() const {
  std::map<std::string, double> out;
  if (samples_ == 0) return out;
  for (const auto& [name, sum] : sums_) out[name] = sum / static_cast<double>(samples_);
  return out;
}

void MetricAccumulator::reset() {
  sums_.clear();
  samples_ = 0;
}

}  // namespace engine::train
