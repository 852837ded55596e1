#include "engine/data/source.hpp"

#include <algorithm>

#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"
#include "engine/data/hdf5_source.hpp"

namespace engine::data {
namespace {

// The rows of an input tensor, uint8 ones as float32 in [0, 1] (images, as ToTensor does).
torch::Tensor rows_as_input(const torch::Tensor& tensor, const torch::Tensor& indices) {
  auto rows = tensor.index_select(0, indices);
  if (rows.scalar_type() == torch::kUInt8) rows = rows.to(torch::kFloat32).div_(255.0);
  return rows;
}

}  // namespace

TensorSource::TensorSource(torch::Tensor input, torch::Tensor target, std::string name,
                           std::map<std::string, torch::Tensor> inputs)
    : input_(std::move(input)),
      target_(std::move(target)),
      inputs_(std::move(inputs)),
      name_(std::move(name)) {
  if (!input_.defined() || input_.dim() < 1) {
    throw core::DataError(name_ + ": input must be a tensor with a sample dimension");
  }
  for (const auto& [key, tensor] : inputs_) {
    if (!tensor.defined() || tensor.dim() < 1 || tensor.size(0) != input_.size(0)) {
      throw core::DataError(name_ + ": input '" + key + "' of shape " +
                            core::shape_string(tensor.sizes()) + " does not have " +
                            std::to_string(input_.size(0)) +
                            " rows, as input has (every input holds one row per sample)");
    }
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
    batch.input = rows_as_input(input_, indices);
  }
  if (target_.defined()) batch.target = target_.index_select(0, indices);
  for (const auto& [key, tensor] : inputs_) batch.inputs[key] = rows_as_input(tensor, indices);
  return batch;
}

Batch TensorSource::gather_bytes(const torch::Tensor& indices) const {
  if (input_.scalar_type() != torch::kUInt8 || !input_.is_contiguous()) return gather(indices);
  Batch batch;
  batch.input = input_.index_select(0, indices);
  batch.scale_bytes = true;
  if (target_.defined()) batch.target = target_.index_select(0, indices);
  for (const auto& [key, tensor] : inputs_) batch.inputs[key] = rows_as_input(tensor, indices);
  return batch;
}

std::shared_ptr<Source> TensorSource::prediction_source(const std::string& input,
                                                        const io::h5::Handle& saved) const {
  io::h5::quiet_errors();
  if (H5Fis_hdf5(input.c_str()) <= 0) return Source::prediction_source(input, saved);
  std::map<std::string, std::string> datasets;
  for (const auto& [key, tensor] : inputs_) datasets[key] = "/" + key;
  auto source = std::make_shared<Hdf5Source>(input, "/input", "", datasets);
  if (source->size() == 0) throw core::DataError(input + ":/input holds no sample");
  const auto sample = source->gather(torch::zeros({1}, torch::kInt64));
  auto check = [&](const std::string& key, const torch::Tensor& trained, const torch::Tensor& now) {
    if (trained.sizes().slice(1) != now.sizes().slice(1)) {
      throw core::DataError(input + ":/" + key + ": samples of shape " +
                            core::shape_string(now.sizes().slice(1)) +
                            ", but the script's input '" + key + "' has " +
                            core::shape_string(trained.sizes().slice(1)));
    }
  };
  check("input", input_, sample.input);
  for (const auto& [key, tensor] : inputs_) check(key, tensor, sample.inputs.at(key));
  return source;
}

std::string TensorSource::describe() const {
  std::string text = name_ + " (" + std::to_string(size()) + " samples, input " +
                     core::shape_string(input_.sizes().slice(1));
  for (const auto& [key, tensor] : inputs_) {
    text += ", " + key + " " + core::shape_string(tensor.sizes().slice(1));
  }
  return text + ")";
}

}  // namespace engine::data
