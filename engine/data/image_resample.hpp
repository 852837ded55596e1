// Antialiased bilinear resampling of images, separable (a horizontal then a vertical pass) with
// the filter PIL and torchvision's antialias=True use: a triangle stretched by the downscaling
// factor, weights normalised at the borders. Enlarging, it is plain bilinear interpolation.
// Written out here because libtorch 1.13's CPU kernel for it is several times slower.
#pragma once

#include <torch/types.h>

namespace engine::data {

// `image`: uint8 or float32, any leading dimensions, the last two being height and width (any
// strides). The result is contiguous, of the same dtype (uint8 rounded and clamped).
torch::Tensor resample_bilinear(const torch::Tensor& image, int64_t height, int64_t width);

}  // namespace engine::data
