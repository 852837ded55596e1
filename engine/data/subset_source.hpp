// A part of another source: the samples at chosen indices, in that order. What
// Pipeline::split makes, so that train and validation come from one source without sharing a
// sample.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/data/source.hpp"

namespace engine::data {

class SubsetSource : public Source {
 public:
  // `indices`: positions in `parent`, each once; `what`: how describe() names the part
  // ("split 1 of 2").
  SubsetSource(std::shared_ptr<const Source> parent, std::vector<int64_t> indices,
               std::string what);
  int64_t size() const override { return static_cast<int64_t>(indices_.size()); }
  Batch gather(const torch::Tensor& indices) const override;
  Batch gather_bytes(const torch::Tensor& indices) const override;
  std::string describe() const override;
  void save_state(const io::h5::Handle& data_group) const override;
  std::shared_ptr<Source> prediction_source(const std::string& input,
                                            const io::h5::Handle& saved) const override;
  std::optional<int64_t> class_count() const override { return parent_->class_count(); }
  std::vector<std::string> class_names() const override { return parent_->class_names(); }

 private:
  torch::Tensor parent_indices(const torch::Tensor& indices) const;

  std::shared_ptr<const Source> parent_;
  std::vector<int64_t> indices_;
  torch::Tensor index_tensor_;
  std::string what_;
};

// The sizes of the parts of `total` samples that `sizes` asks for: fractions (each in (0, 1],
// summing to at most 1; the parts are rounded down, the first takes what rounding left when the
// fractions sum to 1) or counts (whole numbers of at least 1, summing to at most total). A
// UsageError names what does not fit.
std::vector<int64_t> split_sizes(const std::vector<double>& sizes, int64_t total);

}  // namespace engine::data
