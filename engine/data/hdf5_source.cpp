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

Hdf5Source::Hdf5Source(const std::string& path, const std::string& input, const std::string& target)
    : path_(path), input_(open_for_reading(path), path, input) {
  if (!target.empty()) {
    // the same open file: HDF5 would refuse a second open with other access properties
    target_.emplace(input_.file(), path, target);
    if (target_->rows() != input_.rows()) {
      throw core::DataError(target_->name() + ": " + std::to_string(target_->rows()) +
                            " rows but " + input_.name() + " has " + std::to_string(input_.rows()));
    }
  }
}

Batch Hdf5Source::gather(const torch::Tensor& indices) const {
  Batch batch;
  batch.input = input_.read(indices);
  if (batch.input.scalar_type() == torch::kUInt8) {
    batch.input = batch.input.to(torch::kFloat32).div_(255.0);
  }
  if (target_) {
    batch.target = target_->read(indices);
    if (!batch.target.is_floating_point()) batch.target = batch.target.to(torch::kInt64);
  }
  return batch;
}

std::string Hdf5Source::describe() const {
  return "hdf5(" + path_ + ", " + std::to_string(size()) + " samples, input " +
         core::shape_string(c10::IntArrayRef(input_.shape()).slice(1)) + ")";
}

}  // namespace engine::data
