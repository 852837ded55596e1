// Synthetic samples for benchmarks and tests: standard-normal inputs of a given shape and
// uniform class targets, generated from (seed, sample index) alone, so any worker produces the
// same sample i and nothing is held in memory.
#pragma once

#include <vector>

#include "engine/data/source.hpp"

namespace engine::data {

class SyntheticSource : public Source {
 public:
  SyntheticSource(std::vector<int64_t> shape, int64_t classes, int64_t size, uint64_t seed);
  int64_t size() const override { return size_; }
  Batch gather(const torch::Tensor& indices) const override;
  std::string describe() const override;
  std::optional<int64_t> class_count() const override { return classes_; }

 private:
  std::vector<int64_t> shape_;
  int64_t classes_;
  int64_t size_;
  uint64_t seed_;
};

}  // namespace engine::data
