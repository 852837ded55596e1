// Transforms applied to gathered batches on the loader's worker threads.
#pragma once

#include <string>
#include <vector>

#include "engine/data/batch.hpp"

namespace engine::data {

class Transform {
 public:
  virtual ~Transform() = default;
  virtual void apply(Batch& batch) const = 0;
  virtual std::string describe() const = 0;
};

// (x - mean) / std, with one value for all channels or one per channel (dimension 2 of NCHW).
class Normalize : public Transform {
 public:
  Normalize(std::vector<double> mean, std::vector<double> std);
  void apply(Batch& batch) const override;
  std::string describe() const override;

 private:
  std::vector<double> mean_, std_;
};

}  // namespace engine::data
