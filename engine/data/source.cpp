#include "engine/data/source.hpp"

#include <algorithm>

#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"

namespace engine::data {

TensorSource::TensorSource(torch::Tensor input, torch::Tensor target, std::string name)
    : input_(std::move(input)), target_(std::move(target)), name_(std::move(name)) {
  if (!input_.defined() || input_.dim() < 1) {
    throw core::DataError(name_ + ": input must be a tensor with a sample dimension");
  }
  if (target_.defined() && (target_.dim() < 1 || target_.size(0) != input_.size(0))) {
    throw core::DataError(name_ + ": " + std::to_string(input_.size(0)) +
                          " inputs but target of shape " + core::shape_string(target_.sizes()));
  }
  if (target_.defined() && target_.scalar_type() == torch::kInt64 && target_.numel() > 0) {
    const auto values = target_.contiguous().cpu();
    const int64_t* v = values.data_ptr<int64_t>();
    const auto [lo, hi] = std::minmax_element(v, v + values.numel());
    if (*lo >= 0) classes_ = *hi + 1;
  }
}

Batch TensorSource::gather(const torch::Tensor& indices) const {
  Batch batch;
  if (input_.scalar_type() == torch::kUInt8 && input_.is_contiguous()) {
    // gather and scale in one pass: a third of the time of index_select, to() and div_()
    auto shape = input_.sizes().vec();
    shape[0] = indices.size(0);
    batch.input = torch::empty(shape, torch::kFloat32);
    const int64_t row = input_.numel() / std::max<int64_t>(1, input_.size(0));
    const auto index = indices.accessor<int64_t, 1>();
    const uint8_t* in = input_.data_ptr<uint8_t>();
    float* out = batch.input.data_ptr<float>();
    for (int64_t i = 0; i < index.size(0); ++i) {
      TORCH_CHECK(index[i] >= 0 && index[i] < input_.size(0), "sample index out of range");
      const uint8_t* src = in + index[i] * row;
      float* dst = out + i * row;
      for (int64_t j = 0; j < row; ++j) dst[j] = static_cast<float>(src[j]) / 255.0f;
    }
  } else {
    batch.input = input_.index_select(0, indices);
    if (batch.input.scalar_type() == torch::kUInt8) {
      batch.input = batch.input.to(torch::kFloat32).div_(255.0);
    }
  }
  if (target_.defined()) batch.target = target_.index_select(0, indices);
  return batch;
}

std::string TensorSource::describe() const {
  return name_ + " (" + std::to_string(size()) + " samples, input " +
         core::shape_string(input_.sizes().slice(1)) + ")";
}

}  // namespace engine::data
