#include "engine/data/mnist.hpp"

#include <filesystem>

#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"
#include "engine/data/idx_reader.hpp"

namespace engine::data {
namespace {

namespace fs = std::filesystem;

std::string find_idx_file(const std::string& root, const std::string& stem) {
  for (const std::string& name : {stem + ".gz", stem}) {
    const fs::path p = fs::path(root) / name;
    if (fs::is_regular_file(p)) return p.string();
  }
  throw core::DataError("MNIST file '" + stem + "[.gz]' not found in " + root +
                        " (expected train-images-idx3-ubyte, train-labels-idx1-ubyte, "
                        "t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte, gzipped or not; "
                        "for MNIST run: datasets/fetch mnist)");
}

}  // namespace

std::shared_ptr<TensorSource> load_mnist(const std::string& root, const std::string& split) {
  if (split != "train" && split != "test") {
    throw core::UsageError("data.mnist: split must be 'train' or 'test', got '" + split + "'");
  }
  if (!fs::is_directory(root)) {
    throw core::DataError("MNIST folder " + root + " does not exist");
  }
  const std::string prefix = split == "train" ? "train" : "t10k";
  const auto images_path = find_idx_file(root, prefix + "-images-idx3-ubyte");
  const auto labels_path = find_idx_file(root, prefix + "-labels-idx1-ubyte");
  auto images = read_idx(images_path);
  auto labels = read_idx(labels_path);
  if (images.dim() < 2) {
    throw core::DataError(images_path + ": images must have rank 3 (count, height, width), got " +
                          core::shape_string(images.sizes()));
  }
  if (labels.dim() != 1) {
    throw core::DataError(labels_path + ": labels must have rank 1, got " +
                          core::shape_string(labels.sizes()));
  }
  if (labels.size(0) != images.size(0)) {
    throw core::DataError(labels_path + ": holds " + std::to_string(labels.size(0)) +
                          " labels but " + images_path + " holds " +
                          std::to_string(images.size(0)) + " images");
  }
  if (images.dim() == 3) images = images.unsqueeze(1);  // N x 1 x H x W, like ToTensor
  return std::make_shared<TensorSource>(images, labels.to(torch::kInt64), "mnist(" + split + ")");
}

}  // namespace engine::data
