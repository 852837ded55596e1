#include "engine/data/source.hpp"

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
}

Batch TensorSource::gather(const torch::Tensor& indices) const {
  Batch batch;
  batch.input = input_.index_select(0, indices);
  if (batch.input.scalar_type() == torch::kUInt8) {
    batch.input = batch.input.to(torch::kFloat32).div_(255.0);
  }
  if (target_.defined()) batch.target = target_.index_select(0, indices);
  return batch;
}

std::string TensorSource::describe() const {
  return name_ + " (" + std::to_string(size()) + " samples, input " +
         core::shape_string(input_.sizes().slice(1)) + ")";
}

}  // namespace engine::data
