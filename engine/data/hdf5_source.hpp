// data.hdf5{path, input = '/x', target = '/y', inputs = {text = '/tokens'}}: samples along the
// first dimension of datasets in an HDF5 file, read by rows on the loader threads (chunked
// datasets larger than memory work).
#pragma once

#include <map>
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
  // `inputs`: further named inputs (Batch::inputs), each a dataset with as many rows as input.
  Hdf5Source(const std::string& path, const std::string& input, const std::string& target,
             const std::map<std::string, std::string>& inputs = {});
  int64_t size() const override { return input_.rows(); }
  Batch gather(const torch::Tensor& indices) const override;
  std::string describe() const override;
  // New data for engine predict: another HDF5 file with the same dataset names (the target
  // dataset is read when the file has it).
  std::shared_ptr<Source> prediction_source(const std::string& input,
                                            const io::h5::Handle& saved) const override;

 private:
  std::string path_;
  std::string input_name_, target_name_;
  std::map<std::string, std::string> input_names_;
  io::DatasetRows input_;
  std::optional<io::DatasetRows> target_;
  std::map<std::string, io::DatasetRows> inputs_;
};

}  // namespace engine::data
