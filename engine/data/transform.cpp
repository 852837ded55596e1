#include "engine/data/transform.hpp"

#include <sstream>

#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"

namespace engine::data {
namespace {

std::string join(const std::vector<double>& values) {
  std::ostringstream out;
  for (size_t i = 0; i < values.size(); ++i) out << (i ? "," : "") << values[i];
  return out.str();
}

}  // namespace

torch::Tensor Transform::apply_sample(const torch::Tensor&, core::Rng*) const {
  throw std::logic_error(describe() + " has no per-sample form");
}

void SampleTransform::apply(Batch& batch, std::vector<core::Rng>& random) const {
  if (batch.samples.empty() && batch.input.defined()) {
    batch.samples = batch.input.unbind(0);
    batch.input = torch::Tensor();
  }
  for (size_t i = 0; i < batch.samples.size(); ++i) {
    batch.samples[i] = apply_sample(batch.samples[i], random.empty() ? nullptr : &random[i]);
  }
}

Normalize::Normalize(std::vector<double> mean, std::vector<double> std)
    : mean_(std::move(mean)), std_(std::move(std)) {
  if (mean_.empty() || mean_.size() != std_.size()) {
    throw core::UsageError("data.normalize: mean and std must be numbers or lists of equal length");
  }
  for (double s : std_) {
    if (!(s > 0)) throw core::UsageError("data.normalize: std must be positive");
  }
}

void Normalize::normalize(torch::Tensor& x, int64_t channel_dim) const {
  if (x.scalar_type() == torch::kUInt8) {
    throw core::DataError(
        "data.normalize: got uint8 pixels; put data.to_float() before it to scale them to [0, 1]");
  }
  if (!x.is_floating_point()) x = x.to(torch::kFloat32);
  if (mean_.size() == 1 && x.scalar_type() == torch::kFloat32 && x.is_contiguous() &&
      x.device().is_cpu()) {
    // one vectorised pass (gathered batches are fresh tensors, never views of a source); a
    // batch on a GPU (normalised there by the device prefetcher) takes sub_/div_ below
    const auto m = static_cast<float>(mean_[0]), s = static_cast<float>(std_[0]);
    float* p = x.data_ptr<float>();
    for (int64_t i = 0, n = x.numel(); i < n; ++i) p[i] = (p[i] - m) / s;
    return;
  }
  if (mean_.size() == 1) {
    x.sub_(mean_[0]).div_(std_[0]);
    return;
  }
  const int64_t channels = static_cast<int64_t>(mean_.size());
  if (x.dim() <= channel_dim || x.size(channel_dim) != channels) {
    throw core::DataError("data.normalize: " + std::to_string(channels) +
                          " per-channel values but the input has shape " +
                          core::shape_string(x.sizes()));
  }
  if (x.scalar_type() == torch::kFloat32 && x.is_contiguous() && x.device().is_cpu()) {
    // One pass over each channel plane in a loop the compiler vectorises; libtorch 1.13's
    // broadcasting sub_/div_ take ten times longer on an image. Same arithmetic as
    // torchvision's normalize: (x - mean) / std in float.
    const int64_t plane = x.stride(channel_dim);
    const int64_t groups = x.numel() / (plane * channels);
    float* data = x.data_ptr<float>();
    for (int64_t g = 0; g < groups; ++g) {
      for (int64_t c = 0; c < channels; ++c) {
        const auto m = static_cast<float>(mean_[static_cast<size_t>(c)]);
        const auto s = static_cast<float>(std_[static_cast<size_t>(c)]);
        float* p = data + (g * channels + c) * plane;
        for (int64_t i = 0; i < plane; ++i) p[i] = (p[i] - m) / s;
      }
    }
    return;
  }
  for (int64_t c = 0; c < channels; ++c) {
    const auto i = static_cast<size_t>(c);
    x.select(channel_dim, c).sub_(mean_[i]).div_(std_[i]);
  }
}

void Normalize::apply(Batch& batch, std::vector<core::Rng>&) const {
  if (!batch.samples.empty()) {
    for (auto& s : batch.samples) normalize(s, 0);
  } else if (batch.input.defined()) {
    normalize(batch.input, 1);
  }
}

torch::Tensor Normalize::apply_sample(const torch::Tensor& sample, core::Rng*) const {
  auto x = sample;
  normalize(x, 0);
  return x;
}

std::string Normalize::describe() const {
  return "normalize(mean=" + join(mean_) + ", std=" + join(std_) + ")";
}

torch::Tensor ToFloat::apply_sample(const torch::Tensor& x, core::Rng*) const {
  if (x.scalar_type() == torch::kUInt8) return x.to(torch::kFloat32).div_(255.0);
  return x.scalar_type() == torch::kFloat32 ? x : x.to(torch::kFloat32);
}

void ToFloat::apply(Batch& batch, std::vector<core::Rng>&) const {
  for (auto& s : batch.samples) s = apply_sample(s, nullptr);
  if (batch.input.defined()) batch.input = apply_sample(batch.input, nullptr);
}

OneHot::OneHot(int64_t classes) : classes_(classes) {
  if (classes_ < 1) throw core::UsageError("data.one_hot: classes must be at least 1");
}

void OneHot::apply(Batch& batch, std::vector<core::Rng>&) const {
  auto& t = batch.target;
  if (!t.defined()) throw core::DataError("data.one_hot: the batch has no target");
  if (t.scalar_type() != torch::kInt64) {
    throw core::DataError("data.one_hot: targets must be class indices, got " +
                          std::string(c10::toString(t.scalar_type())));
  }
  if (t.numel() > 0 && (t.min().item<int64_t>() < 0 || t.max().item<int64_t>() >= classes_)) {
    throw core::DataError("data.one_hot: class " + std::to_string(t.max().item<int64_t>() + 1) +
                          " is outside 1.." + std::to_string(classes_));
  }
  t = torch::one_hot(t, classes_).to(torch::kFloat32);
}

std::string OneHot::describe() const {
  return "one_hot(" + std::to_string(classes_) + ")";
}

Compose::Compose(std::vector<std::shared_ptr<const Transform>> parts) : parts_(std::move(parts)) {
  for (const auto& p : parts_) {
    if (!p) throw core::UsageError("data.compose expects a list of transforms");
  }
}

void Compose::apply(Batch& batch, std::vector<core::Rng>& random) const {
  for (const auto& p : parts_) p->apply(batch, random);
}

bool Compose::per_sample() const {
  for (const auto& p : parts_) {
    if (!p->per_sample()) return false;
  }
  return true;
}

torch::Tensor Compose::apply_sample(const torch::Tensor& sample, core::Rng* random) const {
  auto x = sample;
  for (const auto& p : parts_) x = p->apply_sample(x, random);
  return x;
}

bool Compose::random() const {
  for (const auto& p : parts_) {
    if (p->random()) return true;
  }
  return false;
}

std::string Compose::describe() const {
  std::string out = "compose(";
  for (size_t i = 0; i < parts_.size(); ++i) out += (i ? ", " : "") + parts_[i]->describe();
  return out + ")";
}

}  // namespace engine::data
