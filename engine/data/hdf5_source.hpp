// data.hdf5{path, input = '/x', target = '/y'}: samples along the first dimension of datasets in
// an HDF5 file, read by rows on the loader threads (chunked datasets larger than memory work).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "engine/data/source.hpp"
#include "engine/io/dataset_rows.hpp"

namespace engine::data {

class Hdf5Source : public Source {
 public:
  // target may be empty (no target). uint8 inputs become float32 in [0, 1] when gathered, and
  // integer targets int64 class indices (0-based in the file, as numpy and PyTorch write them).
  Hdf5Source(const std::string& path, const std::string& input, const std::string& target);
  int64_t size() const override { return input_.rows(); }
  Batch gather(const torch::Tensor& indices) const override;
  std::string describe() const override;

 private:
  std::string path_;
  io::DatasetRows input_;
  std::optional<io::DatasetRows> target_;
};

}  // namespace engine::data
