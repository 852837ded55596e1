// CIFAR-10 and CIFAR-100 in their binary formats (cifar-10-batches-bin, cifar-100-binary).
#pragma once

#include <memory>
#include <string>

#include "engine/data/source.hpp"

namespace engine::data {

// CIFAR-10: data_batch_1..5.bin (train) or test_batch.bin (test); records of one label byte
// and 3072 pixel bytes. `root` is the folder holding them or its parent.
std::shared_ptr<TensorSource> load_cifar10(const std::string& root, const std::string& split);

// CIFAR-100: train.bin or test.bin; records of a coarse and a fine label byte and 3072 pixel
// bytes. `labels` is "fine" (100 classes) or "coarse" (20).
std::shared_ptr<TensorSource> load_cifar100(const std::string& root, const std::string& split,
                                            const std::string& labels);

}  // namespace engine::data
