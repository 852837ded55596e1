// Transforms applied to gathered batches on the loader's worker threads. A transform sees either
// a stacked batch (batch.input) or samples not stacked yet (batch.samples) and handles both.
// Random transforms draw from one generator per sample, seeded by (seed, epoch, sample index),
// so augmentation does not depend on the number of workers and repeats on resume.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/core/seed.hpp"
#include "engine/data/batch.hpp"

namespace engine::data {

class Transform {
 public:
  virtual ~Transform() = default;
  // random[i] is sample i's generator (empty unless random() is true for some transform).
  virtual void apply(Batch& batch, std::vector<core::Rng>& random) const = 0;
  virtual bool random() const { return false; }
  virtual std::string describe() const = 0;
  // Transforms of the input alone also work one sample at a time: the loader then takes each
  // sample of a source that hands them over unstacked through all of them and straight into
  // its slot of the batch, so no intermediate of a whole batch is ever held.
  virtual bool per_sample() const { return false; }
  virtual torch::Tensor apply_sample(const torch::Tensor& sample, core::Rng* random) const;
  // Elementwise on a stacked batch, with no random draw, on whatever device the batch is: the
  // loader may leave it to the device prefetcher, after the batch's copy to the GPU.
  virtual bool on_any_device() const { return false; }
};

// A transform defined on one sample (C x H x W, or any tensor for the non-spatial ones),
// applied to each sample of the batch; a stacked batch is split into samples first.
class SampleTransform : public Transform {
 public:
  void apply(Batch& batch, std::vector<core::Rng>& random) const override;
  bool per_sample() const override { return true; }
};

// (x - mean) / std, with one value for all channels or one per channel (the first dimension of a
// sample, dimension 2 of an N x C x ... batch). Needs float input: see ToFloat.
class Normalize : public Transform {
 public:
  Normalize(std::vector<double> mean, std::vector<double> std);
  void apply(Batch& batch, std::vector<core::Rng>& random) const override;
  std::string describe() const override;
  bool per_sample() const override { return true; }
  torch::Tensor apply_sample(const torch::Tensor& sample, core::Rng* random) const override;
  bool on_any_device() const override { return true; }

 private:
  void normalize(torch::Tensor& x, int64_t channel_dim) const;
  std::vector<double> mean_, std_;
};

// uint8 pixels to float32 in [0, 1] (torchvision's ToTensor scaling); other dtypes to float32.
class ToFloat : public Transform {
 public:
  void apply(Batch& batch, std::vector<core::Rng>& random) const override;
  std::string describe() const override { return "to_float"; }
  bool per_sample() const override { return true; }
  torch::Tensor apply_sample(const torch::Tensor& sample, core::Rng* random) const override;
  bool on_any_device() const override { return true; }
};

// Class targets to one-hot float32 rows of `classes` columns (for BCE-style losses).
class OneHot : public Transform {
 public:
  explicit OneHot(int64_t classes);
  void apply(Batch& batch, std::vector<core::Rng>& random) const override;
  std::string describe() const override;

 private:
  int64_t classes_;
};

// Several transforms applied in order.
class Compose : public Transform {
 public:
  explicit Compose(std::vector<std::shared_ptr<const Transform>> parts);
  void apply(Batch& batch, std::vector<core::Rng>& random) const override;
  bool random() const override;
  std::string describe() const override;
  bool per_sample() const override;
  torch::Tensor apply_sample(const torch::Tensor& sample, core::Rng* random) const override;

 private:
  std::vector<std::shared_ptr<const Transform>> parts_;
};

}  // namespace engine::data
