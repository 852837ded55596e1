// Rows of an HDF5 dataset read on demand (along its first dimension), for data sources larger
// than memory. Safe to call from several loader threads: Debian's HDF5 is built thread-safe.
#pragma once

#include <torch/types.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/io/hdf5.hpp"
#include "engine/io/tensor_archive.hpp"

namespace engine::io {

class DatasetRows {
 public:
  // Opens `dataset` (a path such as "/x") in `file`; DataError naming both when either is
  // missing, the dataset is not numeric, or it has no first dimension to index.
  DatasetRows(std::shared_ptr<h5::Handle> file, const std::string& file_name,
              const std::string& dataset);

  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t rows() const { return shape_.front(); }
  torch::ScalarType dtype() const { return type_.dtype; }
  const std::string& name() const { return name_; }
  const std::shared_ptr<h5::Handle>& file() const { return file_; }

  // The rows at `indices` (int64, 0-based, any order, repeats allowed), in that order.
  torch::Tensor read(const torch::Tensor& indices) const;

 private:
  std::shared_ptr<h5::Handle> file_;  // kept open as long as any reader needs it
  std::string name_;                  // "file.h5:/x", for messages
  h5::Handle dataset_;
  ReadType type_;
  std::vector<int64_t> shape_;
};

}  // namespace engine::io
