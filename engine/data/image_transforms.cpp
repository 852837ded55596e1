#include "engine/data/image_transforms.hpp"

#include <ATen/Dispatch.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"
#include "engine/data/image_resample.hpp"

namespace engine::data {
namespace {

void check_size(const Size2& size, const char* what) {
  if (size.height < 1 || size.width < 1) {
    throw core::UsageError(std::string(what) + ": size must be positive, got " +
                           std::to_string(size.height) + "x" + std::to_string(size.width));
  }
}

void check_image(const torch::Tensor& x, const char* what) {
  if (x.dim() < 2) {
    throw core::DataError(std::string(what) + ": expects images (C x H x W), got shape " +
                          core::shape_string(x.sizes()));
  }
}

std::string size_string(const Size2& s) {
  return std::to_string(s.height) + "x" + std::to_string(s.width);
}

// Region [top, top + height) x [left, left + width) of the last two dimensions; parts outside
// the image are zeros.
torch::Tensor crop(const torch::Tensor& x, int64_t top, int64_t left, int64_t height,
                   int64_t width) {
  const int64_t h = x.size(-2), w = x.size(-1);
  if (top >= 0 && left >= 0 && top + height <= h && left + width <= w) {
    return x.narrow(-2, top, height).narrow(-1, left, width);
  }
  // pad by what lies outside, then crop inside the padded image
  const int64_t pad_top = std::max<int64_t>(0, -top), pad_left = std::max<int64_t>(0, -left);
  const int64_t pad_bottom = std::max<int64_t>(0, top + height - h);
  const int64_t pad_right = std::max<int64_t>(0, left + width - w);
  auto padded = torch::constant_pad_nd(x, {pad_left, pad_right, pad_top, pad_bottom}, 0);
  return padded.narrow(-2, top + pad_top, height).narrow(-1, left + pad_left, width);
}

}  // namespace

torch::Tensor resize_image(const torch::Tensor& image, int64_t height, int64_t width) {
  if (image.size(-2) == height && image.size(-1) == width) return image;
  if (image.scalar_type() == torch::kUInt8 || image.is_floating_point()) {
    return resample_bilinear(image, height, width);
  }
  throw core::DataError("data.resize: expects uint8 or floating-point images, got " +
                        std::string(c10::toString(image.scalar_type())));
}

torch::Tensor flip_image(const torch::Tensor& image, bool vertical) {
  // libtorch 1.13's flip walks with negative strides and is ten times slower than this
  const auto x = image.contiguous();
  auto out = torch::empty_like(x);
  const int64_t width = x.size(-1), height = x.size(-2);
  const int64_t planes = x.numel() / std::max<int64_t>(1, width * height);
  AT_DISPATCH_ALL_TYPES_AND3(
      at::kBool, at::kHalf, at::kBFloat16, x.scalar_type(), "flip_image", [&] {
        const scalar_t* src = x.data_ptr<scalar_t>();
        scalar_t* dst = out.data_ptr<scalar_t>();
        for (int64_t p = 0; p < planes; ++p) {
          for (int64_t r = 0; r < height; ++r) {
            const scalar_t* row = src + (p * height + r) * width;
            if (vertical) {
              std::copy(row, row + width, dst + (p * height + (height - 1 - r)) * width);
            } else {
              std::reverse_copy(row, row + width, dst + (p * height + r) * width);
            }
          }
        }
      });
  return out;
}

Resize::Resize(Size2 size) : size_(size) {
  check_size(size_, "data.resize");
}

Resize::Resize(int64_t smaller_edge) : smaller_edge_(smaller_edge) {
  if (smaller_edge_ < 1) throw core::UsageError("data.resize: size must be positive");
}

torch::Tensor Resize::apply_sample(const torch::Tensor& x, core::Rng*) const {
  check_image(x, "data.resize");
  if (smaller_edge_ == 0) return resize_image(x, size_.height, size_.width);
  const int64_t h = x.size(-2), w = x.size(-1);
  // torchvision: the smaller edge becomes `size`, the other one truncates size * long / short
  if (h <= w) return resize_image(x, smaller_edge_, smaller_edge_ * w / h);
  return resize_image(x, smaller_edge_ * h / w, smaller_edge_);
}

std::string Resize::describe() const {
  return "resize(" + (smaller_edge_ ? std::to_string(smaller_edge_) : size_string(size_)) + ")";
}

CenterCrop::CenterCrop(Size2 size) : size_(size) {
  check_size(size_, "data.center_crop");
}

torch::Tensor CenterCrop::apply_sample(const torch::Tensor& x, core::Rng*) const {
  check_image(x, "data.center_crop");
  const int64_t h = x.size(-2), w = x.size(-1);
  // torchvision: int(round((image - crop) / 2)), Python's round being half to even like nearbyint
  const auto offset = [](int64_t image, int64_t crop) {
    return static_cast<int64_t>(std::nearbyint(static_cast<double>(image - crop) / 2.0));
  };
  return crop(x, offset(h, size_.height), offset(w, size_.width), size_.height, size_.width);
}

std::string CenterCrop::describe() const {
  return "center_crop(" + size_string(size_) + ")";
}

RandomCrop::RandomCrop(Size2 size, int64_t padding) : size_(size), padding_(padding) {
  check_size(size_, "data.random_crop");
  if (padding_ < 0) throw core::UsageError("data.random_crop: padding must be >= 0");
}

torch::Tensor RandomCrop::apply_sample(const torch::Tensor& x, core::Rng* random) const {
  check_image(x, "data.random_crop");
  const int64_t h = x.size(-2) + 2 * padding_, w = x.size(-1) + 2 * padding_;
  if (h < size_.height || w < size_.width) {
    throw core::DataError("data.random_crop: crop " + size_string(size_) +
                          " is larger than the (padded) image " + std::to_string(h) + "x" +
                          std::to_string(w));
  }
  const int64_t top = random->below(h - size_.height + 1) - padding_;
  const int64_t left = random->below(w - size_.width + 1) - padding_;
  return crop(x, top, left, size_.height, size_.width);
}

std::string RandomCrop::describe() const {
  return "random_crop(" + size_string(size_) +
         (padding_ ? ", padding=" + std::to_string(padding_) : std::string()) + ")";
}

RandomResizedCrop::RandomResizedCrop(Size2 size, double scale_min, double scale_max,
                                     double ratio_min, double ratio_max)
    : size_(size),
      scale_min_(scale_min),
      scale_max_(scale_max),
      ratio_min_(ratio_min),
      ratio_max_(ratio_max) {
  check_size(size_, "data.random_resized_crop");
  if (!(scale_min_ > 0 && scale_min_ <= scale_max_ && scale_max_ <= 1)) {
    throw core::UsageError(
        "data.random_resized_crop: scale must be {min, max} with 0 < min <= "
        "max <= 1");
  }
  if (!(ratio_min_ > 0 && ratio_min_ <= ratio_max_)) {
    throw core::UsageError(
        "data.random_resized_crop: ratio must be {min, max} with 0 < min <= "
        "max");
  }
}

torch::Tensor RandomResizedCrop::apply_sample(const torch::Tensor& x, core::Rng* random) const {
  check_image(x, "data.random_resized_crop");
  const int64_t height = x.size(-2), width = x.size(-1);
  const double area = static_cast<double>(height * width);
  const double log_min = std::log(ratio_min_), log_max = std::log(ratio_max_);
  // torchvision's get_params: ten tries at a region that fits, then a central fallback
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target_area = area * random->uniform(scale_min_, scale_max_);
    const double aspect = std::exp(random->uniform(log_min, log_max));
    const auto w = static_cast<int64_t>(std::lround(std::sqrt(target_area * aspect)));
    const auto h = static_cast<int64_t>(std::lround(std::sqrt(target_area / aspect)));
    if (w > 0 && h > 0 && w <= width && h <= height) {
      const int64_t top = random->below(height - h + 1);
      const int64_t left = random->below(width - w + 1);
      return resize_image(crop(x, top, left, h, w), size_.height, size_.width);
    }
  }
  const double in_ratio = static_cast<double>(width) / static_cast<double>(height);
  int64_t w = width, h = height;
  if (in_ratio < ratio_min_) {
    h = std::lround(static_cast<double>(w) / ratio_min_);
  } else if (in_ratio > ratio_max_) {
    w = std::lround(static_cast<double>(h) * ratio_max_);
  }
  return resize_image(crop(x, (height - h) / 2, (width - w) / 2, h, w), size_.height, size_.width);
}

std::string RandomResizedCrop::describe() const {
  return "random_resized_crop(" + size_string(size_) + ")";
}

RandomFlip::RandomFlip(double probability, bool vertical)
    : probability_(probability), vertical_(vertical) {
  if (!(probability_ >= 0 && probability_ <= 1)) {
    throw core::UsageError("data.random_flip: p must be in [0, 1]");
  }
}

torch::Tensor RandomFlip::apply_sample(const torch::Tensor& x, core::Rng* random) const {
  check_image(x, "data.random_flip");
  if (random->uniform() >= probability_) return x;
  return flip_image(x, vertical_);
}

std::string RandomFlip::describe() const {
  std::ostringstream out;
  out << (vertical_ ? "random_flip(vertical, p=" : "random_flip(p=") << probability_ << ")";
  return out.str();
}

}  // namespace engine::data
