#include "engine/train/metrics.hpp"

#include <cmath>

#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"
#include "engine/core/metric_names.hpp"
#include "engine/train/spec.hpp"

namespace engine::train {
namespace {

using core::is_class_count_metric;
using core::topk_of;

std::string shape_of(const torch::Tensor& t) {
  std::vector<std::string> dims;
  for (auto d : t.sizes()) dims.push_back(std::to_string(d));
  return dims.empty() ? "a scalar" : core::join(dims, "x");
}

void check_class_scores(const std::string& metric, const torch::Tensor& output,
                        const torch::Tensor& target) {
  if (output.dim() != 2 || target.dim() != 1 || target.size(0) != output.size(0) ||
      target.is_floating_point()) {
    throw core::UsageError("metric '" + metric +
                           "' needs N x C class scores and N class targets, got output " +
                           shape_of(output) + " and target " + shape_of(target));
  }
}

// Mean squared or absolute error over all elements, for targets shaped like the output: a
// float64 scalar on the output's device.
torch::Tensor regression_error(const std::string& metric, const torch::Tensor& output,
                               const torch::Tensor& target) {
  if (output.numel() != target.numel()) {
    throw core::UsageError("metric '" + metric + "' needs targets shaped like the output, got " +
                           "output " + shape_of(output) + " and target " + shape_of(target));
  }
  auto diff =
      output.detach().to(torch::kFloat64).reshape(-1) - target.to(torch::kFloat64).reshape(-1);
  return (metric == "mse" ? diff.square() : diff.abs()).mean();
}

// 3 x C: true positives, false positives, false negatives per class.
torch::Tensor class_counts(const torch::Tensor& output, const torch::Tensor& target) {
  check_class_scores("f1", output, target);
  const int64_t classes = output.size(1);
  auto predicted = output.argmax(1).cpu();
  auto truth = target.cpu().to(torch::kInt64);
  auto hits = predicted.eq(truth);
  auto tp = torch::bincount(truth.masked_select(hits), {}, classes);
  auto fp = torch::bincount(predicted, {}, classes) - tp;
  auto fn = torch::bincount(truth, {}, classes) - tp;
  return torch::stack({tp, fp, fn}).to(torch::kFloat64);
}

// Macro averages over the classes that appear among targets or predictions, as scikit-learn's
// average='macro' does.
void macro_scores(const torch::Tensor& counts, std::map<std::string, double>& out) {
  auto c = counts.accessor<double, 2>();
  double precision = 0, recall = 0, f1 = 0;
  int64_t classes = 0;
  for (int64_t k = 0; k < counts.size(1); ++k) {
    const double tp = c[0][k], fp = c[1][k], fn = c[2][k];
    if (tp + fp + fn == 0) continue;
    const double p = tp + fp > 0 ? tp / (tp + fp) : 0;
    const double r = tp + fn > 0 ? tp / (tp + fn) : 0;
    precision += p;
    recall += r;
    f1 += p + r > 0 ? 2 * p * r / (p + r) : 0;
    ++classes;
  }
  const double n = classes > 0 ? static_cast<double>(classes) : 1;
  out["precision"] = precision / n;
  out["recall"] = recall / n;
  out["f1"] = f1 / n;
}

}  // namespace

torch::Tensor correct_count(const torch::Tensor& output, const torch::Tensor& target) {
  check_class_scores("accuracy", output, target);
  return output.argmax(1).eq(target).sum();
}

torch::Tensor topk_correct_count(const torch::Tensor& output, const torch::Tensor& target,
                                 int64_t k) {
  check_class_scores("top" + std::to_string(k), output, target);
  k = std::min<int64_t>(k, output.size(1));
  auto top = std::get<1>(output.topk(k, 1));
  return top.eq(target.unsqueeze(1)).any(1).sum();
}

double accuracy(const torch::Tensor& output, const torch::Tensor& target) {
  if (target.numel() == 0) return 0;
  return correct_count(output, target).item<double>() / static_cast<double>(target.numel());
}

double topk_accuracy(const torch::Tensor& output, const torch::Tensor& target, int64_t k) {
  if (target.numel() == 0) return 0;
  return topk_correct_count(output, target, k).item<double>() / static_cast<double>(target.numel());
}

void check_metric_name(const std::string& name) {
  if (name == "accuracy" || topk_of(name) > 0 || is_class_count_metric(name) || name == "mse" ||
      name == "mae") {
    return;
  }
  throw core::UsageError("unknown metric '" + name +
                         "' (known: accuracy, top<k> such as top5, precision, recall, f1, mse, "
                         "mae; or name = function(output, target) ... end)");
}

MetricAccumulator::MetricAccumulator(std::vector<std::string> metrics,
                                     std::vector<CustomMetric> custom)
    : metrics_(std::move(metrics)), custom_(std::move(custom)) {
  for (const auto& m : metrics_) {
    check_metric_name(m);
    class_counts_ |= is_class_count_metric(m);
  }
}

BatchMetrics MetricAccumulator::evaluate(double loss, const torch::Tensor& output,
                                         const torch::Tensor& target) const {
  BatchMetrics out;
  out.samples = target.defined() && target.dim() > 0 ? target.size(0) : 1;
  out.means["loss"] = loss;
  for (const auto& m : metrics_) {
    if (is_class_count_metric(m)) continue;
    if (m == "mse" || m == "mae") {
      out.means[m] = regression_error(m, output, target).item<double>();
      continue;
    }
    const int64_t k = topk_of(m);
    out.means[m] = k > 0 ? topk_accuracy(output, target, k) : accuracy(output, target);
  }
  for (const auto& c : custom_) out.means[c.name] = c.compute(output, target);
  if (class_counts_) out.counts = class_counts(output, target);
  return out;
}

BatchMetrics MetricAccumulator::measure(const std::map<std::string, double>& values,
                                        const torch::Tensor& output, const torch::Tensor& target,
                                        int64_t samples) const {
  BatchMetrics out;
  if (output.defined()) {
    out = evaluate(0.0, output.detach().to(torch::kFloat32), target);
    out.means.erase("loss");  // a loss only where one was computed: it is among the values
  }
  out.samples = samples;
  for (const auto& [name, value] : values) out.means[name] = value;
  return out;
}

PendingBatch MetricAccumulator::measure_pending(const torch::Tensor& loss,
                                                const std::map<std::string, double>& values,
                                                const torch::Tensor& output,
                                                const torch::Tensor& target,
                                                int64_t samples) const {
  PendingBatch out;
  out.known.samples = samples;
  if (output.defined()) {
    const auto scores = output.detach().to(torch::kFloat32);
    const double count = static_cast<double>(target.numel());
    for (const auto& m : metrics_) {
      if (is_class_count_metric(m)) continue;
      if (m == "mse" || m == "mae") {
        out.device.push_back({m, regression_error(m, scores, target), 1.0});
        continue;
      }
      if (target.numel() == 0) {  // as accuracy() counts an empty batch
        out.known.means[m] = 0;
        continue;
      }
      const int64_t k = topk_of(m);
      out.device.push_back(
          {m, k > 0 ? topk_correct_count(scores, target, k) : correct_count(scores, target),
           count});
    }
    for (const auto& c : custom_) out.known.means[c.name] = c.compute(scores, target);
    if (class_counts_) out.known.counts = class_counts(scores, target);
  }
  // the loss as the per-step read takes it: one value, or the sum of a loss per sample
  if (loss.defined()) {
    out.device.push_back(
        {"loss", loss.numel() == 1 ? loss.detach().reshape({}) : loss.detach().sum(), 1.0});
  }
  for (const auto& [name, value] : values) out.known.means[name] = value;
  return out;
}

std::vector<BatchMetrics> read_pending(const std::vector<PendingBatch>& pending,
                                       const std::vector<torch::Tensor>& also,
                                       std::vector<double>* also_read) {
  std::vector<torch::Tensor> tensors;
  for (const auto& batch : pending) {
    for (const auto& value : batch.device) tensors.push_back(value.value.to(torch::kFloat64));
  }
  for (const auto& value : also) tensors.push_back(value.to(torch::kFloat64).reshape({}));
  // one copy for the lot: float32 and integer counts are exact in float64, so each value is
  // what its own item<double>() would have read
  const auto read = tensors.empty() ? torch::Tensor() : torch::stack(tensors).cpu();
  const double* numbers = read.defined() ? read.data_ptr<double>() : nullptr;
  std::vector<BatchMetrics> out;
  out.reserve(pending.size());
  size_t at = 0;
  for (const auto& batch : pending) {
    BatchMetrics metrics = batch.known;
    for (const auto& value : batch.device) {
      // a value a script logged under the same name wins, as in measure()
      if (!batch.known.means.count(value.name)) {
        metrics.means[value.name] = numbers[at] / value.divisor;
      }
      ++at;
    }
    out.push_back(std::move(metrics));
  }
  if (also_read && !also.empty()) also_read->assign(numbers + at, numbers + at + also.size());
  return out;
}

void MetricAccumulator::add(const BatchMetrics& batch) {
  add(batch.means, batch.samples);
  if (!batch.counts.defined()) return;
  if (!counts_.defined()) {
    counts_ = batch.counts.clone();
  } else if (counts_.size(1) < batch.counts.size(1)) {
    auto grown = batch.counts.clone();
    grown.narrow(1, 0, counts_.size(1)).add_(counts_);
    counts_ = grown;
  } else {
    counts_.narrow(1, 0, batch.counts.size(1)).add_(batch.counts);
  }
}

void MetricAccumulator::add(const std::map<std::string, double>& values, int64_t samples) {
  for (const auto& [name, value] : values) sums_[name] += value * static_cast<double>(samples);
  samples_ += samples;
}

void MetricAccumulator::add(double loss, const torch::Tensor& output, const torch::Tensor& target) {
  add(evaluate(loss, output, target));
}

double MetricAccumulator::average(const std::string& name) const {
  auto it = sums_.find(name);
  return samples_ == 0 || it == sums_.end() ? 0.0 : it->second / static_cast<double>(samples_);
}

std::map<std::string, double> MetricAccumulator::averages() const {
  std::map<std::string, double> out;
  if (samples_ == 0) return out;
  for (const auto& [name, sum] : sums_) out[name] = sum / static_cast<double>(samples_);
  if (counts_.defined()) {
    std::map<std::string, double> scores;
    macro_scores(counts_, scores);
    for (const auto& m : metrics_) {
      if (is_class_count_metric(m)) out[m] = scores[m];
    }
  }
  return out;
}

void MetricAccumulator::reset() {
  sums_.clear();
  counts_ = torch::Tensor();
  samples_ = 0;
}

void MetricAccumulator::restore(std::map<std::string, double> sums, int64_t samples,
                                torch::Tensor counts) {
  sums_ = std::move(sums);
  samples_ = samples;
  counts_ = std::move(counts);
}

// ---- what keep_best, early stopping and ReduceLROnPlateau watch (spec.hpp) ----

bool MetricGoal::better(double candidate, double best, double min_delta) const {
  if (std::isnan(candidate)) return false;
  if (std::isnan(best)) return true;
  return maximize ? candidate > best + min_delta : candidate < best - min_delta;
}

MetricGoal parse_goal(const std::string& metric, const std::string& mode) {
  MetricGoal goal;
  const auto dot = metric.find('.');
  if (dot == std::string::npos) {
    goal.name = metric;
  } else {
    goal.split = metric.substr(0, dot);
    goal.name = metric.substr(dot + 1);
  }
  if (goal.split != "validation" && goal.split != "train") {
    throw core::UsageError("metric '" + metric +
                           "': the split must be 'validation' or 'train' (validation.loss)");
  }
  if (goal.name.empty()) throw core::UsageError("metric '" + metric + "' names no metric");
  if (mode.empty()) {
    goal.maximize = larger_is_better(goal.name);
  } else if (mode == "max" || mode == "min") {
    goal.maximize = mode == "max";
  } else {
    throw core::UsageError("mode for '" + metric + "' must be 'min' or 'max', got '" + mode + "'");
  }
  return goal;
}

}  // namespace engine::train
