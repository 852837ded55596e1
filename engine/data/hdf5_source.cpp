#include "engine/data/hdf5_source.hpp"

#include <filesystem>

#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"

namespace engine::data {
namespace {

std::shared_ptr<io::h5::Handle> open_for_reading(const std::string& path) {
  if (!std::filesystem::is_regular_file(path)) {
    throw core::DataError("data.hdf5: " + path + " does not exist");
  }
  io::h5::quiet_errors();
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    throw core::DataError("data.hdf5: " + path + " is not an HDF5 file (or is truncated)");
  }
  const hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (id < 0) throw core::DataError("data.hdf5: " + path + " cannot be opened (corrupt?)");
  return std::make_shared<io::h5::Handle>(id, H5Fclose, "open " + path);
}

}  // namespace

Hdf5Source::Hdf5Source(const std::string& path, const std::string& input, const std::string& target,
                       const std::map<std::string, std::string>& inputs)
    : path_(path),
      input_name_(input),
      target_name_(target),
      input_names_(inputs),
      input_(open_for_reading(path), path, input) {
  // the same open file for every dataset: HDF5 would refuse a second open with other access
  // properties
  auto same_rows = [&](const io::DatasetRows& rows) {
    if (rows.rows() != input_.rows()) {
      throw core::DataError(rows.name() + ": " + std::to_string(rows.rows()) + " rows but " +
                            input_.name() + " has " + std::to_string(input_.rows()));
    }
  };
  if (!target.empty()) {
    target_.emplace(input_.file(), path, target);
    same_rows(*target_);
  }
  for (const auto& [key, dataset] : inputs) {
    same_rows(inputs_.emplace(key, io::DatasetRows(input_.file(), path, dataset)).first->second);
  }
}

// Rows of an input dataset, uint8 ones as float32 in [0, 1] (images, as ToTensor does).
static torch::Tensor input_rows(const io::DatasetRows& rows, const torch::Tensor& indices) {
  auto out = rows.read(indices);
  if (out.scalar_type() == torch::kUInt8) out = out.to(torch::kFloat32).div_(255.0);
  return out;
}

Batch Hdf5Source::gather(const torch::Tensor& indices) const {
  Batch batch;
  batch.input = input_rows(input_, indices);
  for (const auto& [key, rows] : inputs_) batch.inputs[key] = input_rows(rows, indices);
  if (target_) {
    batch.target = target_->read(indices);
    if (!batch.target.is_floating_point()) batch.target = batch.target.to(torch::kInt64);
  }
  return batch;
}

std::string Hdf5Source::describe() const {
  std::string text = "hdf5(" + path_ + ", " + std::to_string(size()) + " samples, input " +
                     core::shape_string(c10::IntArrayRef(input_.shape()).slice(1));
  for (const auto& [key, rows] : inputs_) {
    text += ", " + key + " " + core::shape_string(c10::IntArrayRef(rows.shape()).slice(1));
  }
  return text + ")";
}

std::shared_ptr<Source> Hdf5Source::prediction_source(const std::string& input,
                                                      const io::h5::Handle&) const {
  std::string target;
  if (!target_name_.empty()) {
    const auto file = open_for_reading(input);
    io::h5::quiet_errors();
    if (H5Lexists(file->get(), target_name_.c_str(), H5P_DEFAULT) > 0) target = target_name_;
  }
  auto source = std::make_shared<Hdf5Source>(input, input_name_, target, input_names_);
  // the same sample shapes as the data the model was trained on
  auto check = [&](const io::DatasetRows& trained, const io::DatasetRows& now) {
    const auto a = c10::IntArrayRef(trained.shape()).slice(1);
    const auto b = c10::IntArrayRef(now.shape()).slice(1);
    if (a != b) {
      throw core::DataError(now.name() + ": samples of shape " + core::shape_string(b) +
                            ", but the script's data (" + trained.name() + ") has " +
                            core::shape_string(a));
    }
  };
  check(input_, source->input_);
  for (const auto& [key, rows] : inputs_) check(rows, source->inputs_.at(key));
  return source;
}

}  // namespace engine::data
