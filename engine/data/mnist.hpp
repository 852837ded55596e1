// MNIST-style datasets (MNIST, Fashion-MNIST, KMNIST...): four IDX files in one folder.
#pragma once

#include <memory>
#include <string>

#include "engine/data/source.hpp"

namespace engine::data {

// split is "train" or "test". Files may be gzipped (.gz) or plain. Images come out as
// 1x28x28 float32 in [0, 1]; labels as int64 class indices.
std::shared_ptr<TensorSource> load_mnist(const std::string& root, const std::string& split);

}  // namespace engine::data
