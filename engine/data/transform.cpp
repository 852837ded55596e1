#include "engine/data/transform.hpp"

#include <sstream>

#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"

namespace engine::data {

Normalize::Normalize(std::vector<double> mean, std::vector<double> std)
    : mean_(std::move(mean)), std_(std::move(std)) {
  if (mean_.empty() || mean_.size() != std_.size()) {
    throw core::UsageError("data.normalize: mean and std must be numbers or lists of equal length");
  }
  for (double s : std_) {
    if (!(s > 0)) throw core::UsageError("data.normalize: std must be positive");
  }
}

void Normalize::apply(Batch& batch) const {
  auto& x = batch.input;
  if (!x.is_floating_point()) x = x.to(torch::kFloat32);
  if (mean_.size() == 1) {
    x.sub_(mean_[0]).div_(std_[0]);
    return;
  }
  const int64_t channels = static_cast<int64_t>(mean_.size());
  if (x.dim() < 2 || x.size(1) != channels) {
    throw core::DataError("data.normalize: " + std::to_string(channels) +
                          " per-channel values but batch input has shape " +
                          core::shape_string(x.sizes()));
  }
  std::vector<int64_t> shape(x.dim(), 1);
  shape[1] = channels;
  auto opts = torch::TensorOptions().dtype(x.scalar_type());
  x.sub_(torch::tensor(mean_, opts).view(shape)).div_(torch::tensor(std_, opts).view(shape));
}

std::string Normalize::describe() const {
  std::ostringstream out;
  out << "normalize(mean=";
  for (size_t i = 0; i < mean_.size(); ++i) out << (i ? "," : "") << mean_[i];
  out << ", std=";
  for (size_t i = 0; i < std_.size(); ++i) out << (i ? "," : "") << std_[i];
  out << ")";
  return out.str();
}

}  // namespace engine::data
