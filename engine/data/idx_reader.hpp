// Reader for the IDX format of MNIST-like datasets, gzipped or plain, of any rank and type.
#pragma once

#include <torch/types.h>

#include <string>

namespace engine::data {

// Reads the whole file into a tensor of the file's element type and shape. Throws DataError
// naming the file for a wrong magic number, an unknown type, a truncated or over-long file.
torch::Tensor read_idx(const std::string& path);

}  // namespace engine::data
