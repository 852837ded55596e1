#include "engine/data/synthetic.hpp"

#include <ATen/CPUGeneratorImpl.h>

#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"
#include "engine/core/seed.hpp"

namespace engine::data {
namespace {
constexpr uint64_t kSyntheticStream = 0x5e7;  // keeps these draws apart from other seeded uses
}

SyntheticSource::SyntheticSource(std::vector<int64_t> shape, int64_t classes, int64_t size,
                                 uint64_t seed)
    : shape_(std::move(shape)), classes_(classes), size_(size), seed_(seed) {
  if (size_ < 1) throw core::UsageError("data.synthetic: size must be at least 1");
  if (classes_ < 1) throw core::UsageError("data.synthetic: classes must be at least 1");
  for (int64_t d : shape_) {
    if (d < 1) {
      throw core::UsageError("data.synthetic: shape " + core::shape_string(shape_) +
                             " has a size below 1");
    }
  }
}

Batch SyntheticSource::gather(const torch::Tensor& indices) const {
  const int64_t n = indices.numel();
  std::vector<int64_t> batch_shape{n};
  batch_shape.insert(batch_shape.end(), shape_.begin(), shape_.end());
  Batch batch;
  batch.input = torch::empty(batch_shape);
  batch.target = torch::empty({n}, torch::kInt64);
  auto index = indices.accessor<int64_t, 1>();
  for (int64_t i = 0; i < n; ++i) {
    auto generator = at::make_generator<at::CPUGeneratorImpl>(
        core::derive_seed(seed_, kSyntheticStream, static_cast<uint64_t>(index[i])));
    batch.input[i].normal_(0.0, 1.0, generator);
    batch.target[i].random_(0, classes_, generator);
  }
  return batch;
}

std::string SyntheticSource::describe() const {
  return "synthetic (" + std::to_string(size_) + " samples, input " + core::shape_string(shape_) +
         ", " + std::to_string(classes_) + " classes)";
}

}  // namespace engine::data
