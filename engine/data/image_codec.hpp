// JPEG (libturbojpeg) and PNG (libpng) in memory <-> C x H x W uint8 tensors.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace engine::data {

enum class ColorMode { kRgb, kGray };

// Decodes a JPEG or PNG (told apart by their signatures, not by file names) into a C x H x W
// uint8 tensor with 3 channels (kRgb) or 1 (kGray); alpha is dropped. A truncated or corrupt
// image, or any other format, throws DataError starting with `what` (the file name).
torch::Tensor decode_image(const std::vector<uint8_t>& bytes, ColorMode mode,
                           const std::string& what);

// Encoders for C x H x W uint8 images with 1 or 3 channels (test fixtures, tools).
std::vector<uint8_t> encode_jpeg(const torch::Tensor& image, int quality = 90);
std::vector<uint8_t> encode_png(const torch::Tensor& image);

}  // namespace engine::data
