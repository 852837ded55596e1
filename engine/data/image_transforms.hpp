// Per-sample image transforms with torchvision's semantics, on C x H x W tensors of uint8 pixels
// (as decoded) or floats. Resizing is bilinear with antialiasing, as torchvision does for PIL
// images; uint8 stays uint8 (rounded), so data.to_float can come last.
#pragma once

#include <cstdint>
#include <string>

#include "engine/data/transform.hpp"

namespace engine::data {

struct Size2 {
  int64_t height = 0;
  int64_t width = 0;
};

// Bilinear, antialiased resize of the last two dimensions to height x width.
torch::Tensor resize_image(const torch::Tensor& image, int64_t height, int64_t width);

// The image mirrored left-right, or top-bottom when vertical (last two dimensions).
torch::Tensor flip_image(const torch::Tensor& image, bool vertical);

// Resize: to exactly `size`, or with `smaller_edge` set, the smaller edge to that many pixels
// keeping the aspect ratio (torchvision's Resize(int)).
class Resize : public SampleTransform {
 public:
  explicit Resize(Size2 size);
  explicit Resize(int64_t smaller_edge);
  std::string describe() const override;
  torch::Tensor apply_sample(const torch::Tensor& sample, core::Rng* random) const override;

 private:
  Size2 size_;
  int64_t smaller_edge_ = 0;
};

// The central height x width region, zero-padded where the image is smaller.
class CenterCrop : public SampleTransform {
 public:
  explicit CenterCrop(Size2 size);
  std::string describe() const override;
  torch::Tensor apply_sample(const torch::Tensor& sample, core::Rng* random) const override;

 private:
  Size2 size_;
};

// A height x width region at a random place, after zero-padding every side by `padding`.
class RandomCrop : public SampleTransform {
 public:
  RandomCrop(Size2 size, int64_t padding);
  bool random() const override { return true; }
  std::string describe() const override;
  torch::Tensor apply_sample(const torch::Tensor& sample, core::Rng* random) const override;

 private:
  Size2 size_;
  int64_t padding_;
};

// torchvision's RandomResizedCrop: a region of random area (fraction in `scale`) and aspect
// ratio (in `ratio`, drawn log-uniformly), resized to `size`.
class RandomResizedCrop : public SampleTransform {
 public:
  RandomResizedCrop(Size2 size, double scale_min, double scale_max, double ratio_min,
                    double ratio_max);
  bool random() const override { return true; }
  std::string describe() const override;
  torch::Tensor apply_sample(const torch::Tensor& sample, core::Rng* random) const override;

 private:
  Size2 size_;
  double scale_min_, scale_max_, ratio_min_, ratio_max_;
};

// Mirrors the image left-right (or top-bottom when vertical) with probability p.
class RandomFlip : public SampleTransform {
 public:
  RandomFlip(double probability, bool vertical);
  bool random() const override { return true; }
  std::string describe() const override;
  torch::Tensor apply_sample(const torch::Tensor& sample, core::Rng* random) const override;

 private:
  double probability_;
  bool vertical_;
};

}  // namespace engine::data
