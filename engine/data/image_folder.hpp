// data.image_folder: one folder per class (torchvision's ImageFolder layout), JPEG and PNG files
// decoded on the loader's threads into C x H x W uint8 samples.
#pragma once

#include <string>
#include <vector>

#include "engine/data/bad_records.hpp"
#include "engine/data/image_codec.hpp"
#include "engine/data/source.hpp"

namespace engine::data {

struct ImageFolderOptions {
  std::string root;
  ColorMode mode = ColorMode::kRgb;
  bool skip_bad = false;  // log and leave out undecodable images instead of stopping
};

class ImageFolderSource : public Source {
 public:
  explicit ImageFolderSource(ImageFolderOptions options);
  int64_t size() const override { return static_cast<int64_t>(paths_.size()); }
  // Samples are handed over unstacked (batch.samples): images may differ in size.
  Batch gather(const torch::Tensor& indices) const override;
  std::string describe() const override;

  // New images listed in a CSV's 'path' column, decoded as these are.
  std::shared_ptr<Source> prediction_source(const std::string& input,
                                            const io::h5::Handle& saved) const override;
  std::vector<std::string> class_names() const override { return classes_; }
  std::optional<int64_t> class_count() const override {
    return static_cast<int64_t>(classes_.size());
  }

  // Class names (folder names, sorted); class i is target i (0-based).
  const std::vector<std::string>& classes() const { return classes_; }
  const std::string& path(int64_t index) const { return paths_.at(static_cast<size_t>(index)); }
  ColorMode mode() const { return options_.mode; }

 private:
  ImageFolderOptions options_;
  std::vector<std::string> classes_;
  std::vector<std::string> paths_;
  std::vector<int64_t> labels_;
  BadRecords bad_;
};

// Images listed by path, without labels: what engine predict reads for an image model.
class ImageListSource : public Source {
 public:
  ImageListSource(std::vector<std::string> paths, ColorMode mode);
  int64_t size() const override { return static_cast<int64_t>(paths_.size()); }
  std::string sample_path(int64_t index) const override {
    return paths_.at(static_cast<size_t>(index));
  }
  Batch gather(const torch::Tensor& indices) const override;
  std::string describe() const override;

 private:
  std::vector<std::string> paths_;
  ColorMode mode_;
};

}  // namespace engine::data
