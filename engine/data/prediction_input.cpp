#include "engine/data/prediction_input.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>

#include "engine/core/errors.hpp"
#include "engine/core/files.hpp"
#include "engine/core/format.hpp"
#include "engine/data/csv_reader.hpp"
#include "engine/data/image_codec.hpp"
#include "engine/data/source.hpp"

namespace engine::data {
namespace {

namespace fs = std::filesystem;

// C x H x W with 1 or 3 channels when the source's samples are images of one size (MNIST,
// CIFAR, image tensors); nothing otherwise.
std::optional<std::vector<int64_t>> image_sample_shape(const Source& source) {
  if (source.size() == 0) return std::nullopt;
  const auto first = source.gather(torch::zeros({1}, torch::kInt64));
  if (!first.input.defined() || first.input.dim() != 4) return std::nullopt;
  const auto shape = first.input.sizes().slice(1).vec();
  if (shape[0] != 1 && shape[0] != 3) return std::nullopt;
  return shape;
}

// Listed images decoded as the training samples are: same channels, same size (checked, not
// resized), scaled to [0, 1] as the built-in image datasets are.
// Decoded images held as tensors, each knowing the file it was read from.
class ListedImagesSource : public TensorSource {
 public:
  ListedImagesSource(torch::Tensor images, std::vector<std::string> paths)
      : TensorSource(std::move(images), torch::Tensor(),
                     "images(" + std::to_string(paths.size()) + " listed)"),
        paths_(std::move(paths)) {}
  std::string sample_path(int64_t index) const override {
    return paths_.at(static_cast<size_t>(index));
  }

 private:
  std::vector<std::string> paths_;
};

std::shared_ptr<Source> image_tensor_source(const std::vector<std::string>& paths,
                                            const std::vector<int64_t>& shape,
                                            const std::string& trained_on) {
  const auto mode = shape[0] == 1 ? ColorMode::kGray : ColorMode::kRgb;
  std::vector<torch::Tensor> images;
  for (const auto& path : paths) {
    auto image = decode_image(core::read_file(path), mode, path);
    if (image.size(1) != shape[1] || image.size(2) != shape[2]) {
      throw core::DataError(path + " is " + std::to_string(image.size(2)) + "x" +
                            std::to_string(image.size(1)) + " pixels; the model was trained on " +
                            std::to_string(shape[2]) + "x" + std::to_string(shape[1]) +
                            " images (" + trained_on + "): resize it first");
    }
    images.push_back(image);
  }
  return std::make_shared<ListedImagesSource>(torch::stack(images), paths);
}

}  // namespace

std::vector<std::string> listed_images(const std::string& csv) {
  const auto rows = read_csv(csv, ',');
  if (rows.empty()) throw core::DataError(csv + ": no rows");
  const auto& header = rows.front().fields;
  const auto column = std::find(header.begin(), header.end(), "path");
  if (column == header.end()) {
    throw core::DataError(
        csv + ": needs a 'path' column listing image files (header: " + core::join(header) + ")");
  }
  const size_t c = static_cast<size_t>(column - header.begin());
  std::vector<std::string> paths;
  const fs::path base = fs::path(csv).parent_path();
  for (size_t r = 1; r < rows.size(); ++r) {
    if (rows[r].fields.size() <= c) {
      throw core::DataError(csv + ": line " + std::to_string(rows[r].line) + " has no path");
    }
    fs::path p = rows[r].fields[c];
    paths.push_back((p.is_absolute() ? p : base / p).string());
  }
  if (paths.empty()) throw core::DataError(csv + ": lists no image");
  return paths;
}

void Source::save_state(const io::h5::Handle&) const {}

std::shared_ptr<Source> Source::prediction_source(const std::string& input,
                                                  const io::h5::Handle&) const {
  if (const auto shape = image_sample_shape(*this)) {
    return image_tensor_source(listed_images(input), *shape, describe());
  }
  throw core::UsageError(
      "engine predict reads new data for data.csv scripts, HDF5 files for data.hdf5 and "
      "data.tensors scripts, and images for scripts whose samples are images "
      "(data.image_folder, MNIST, CIFAR...); this script's data is " +
      describe());
}

}  // namespace engine::data
