#include "engine/bench/data_feed.hpp"

#include "engine/core/errors.hpp"
#include "engine/data/caffe_lmdb.hpp"
#include "engine/data/cifar.hpp"
#include "engine/data/hdf5_source.hpp"
#include "engine/data/image_folder.hpp"
#include "engine/data/image_transforms.hpp"
#include "engine/data/loader.hpp"
#include "engine/data/mnist.hpp"
#include "engine/data/synthetic.hpp"
#include "engine/data/transform.hpp"

namespace engine::bench {
namespace {

// Samples a synthetic epoch holds: enough batches that the loader runs as it would on data.
constexpr int64_t kSyntheticBatches = 64;

// Images of any size to the model's input: DLBS's transforms for training (torchvision's
// RandomResizedCrop, scale 0.08 to 1, ratio 3/4 to 4/3, and a horizontal flip half the time),
// resize and center crop for inference.
data::Pipeline image_pipeline(data::Pipeline images, const std::vector<int64_t>& input_shape,
                              bool augment) {
  const data::Size2 size{input_shape[1], input_shape[2]};
  if (augment) {
    images =
        images.map(std::make_shared<data::RandomResizedCrop>(size, 0.08, 1.0, 3.0 / 4.0, 4.0 / 3.0))
            .map(std::make_shared<data::RandomFlip>(0.5, false));
  } else {
    images = images.map(std::make_shared<data::Resize>(std::min(size.height, size.width)))
                 .map(std::make_shared<data::CenterCrop>(size));
  }
  return images.map(std::make_shared<data::ToFloat>());
}

data::Pipeline real_pipeline(const DataOptions& o, const std::vector<int64_t>& input_shape) {
  if (o.dir.empty()) {
    throw core::UsageError("--data real needs --data_dir: the dataset's folder (or HDF5 file)");
  }
  if (o.backend == "idx") return data::Pipeline(data::load_mnist(o.dir, "train"));
  if (o.backend == "cifar") return data::Pipeline(data::load_cifar10(o.dir, "train"));
  if (o.backend == "hdf5") {
    return data::Pipeline(std::make_shared<data::Hdf5Source>(o.dir, "/x", "/y"));
  }
  if (o.backend == "image_folder" || o.backend == "caffe_lmdb") {
    if (input_shape.size() != 3) {
      throw core::UsageError("--data_backend " + o.backend +
                             " needs a model whose input is an image (C x H x W)");
    }
    const auto mode = input_shape[0] == 1 ? data::ColorMode::kGray : data::ColorMode::kRgb;
    if (o.backend == "caffe_lmdb") {
      return image_pipeline(data::Pipeline(std::make_shared<data::CaffeLmdbSource>(o.dir, mode)),
                            input_shape, o.augment);
    }
    data::ImageFolderOptions folder;
    folder.root = o.dir;
    folder.mode = mode;
    return image_pipeline(data::Pipeline(std::make_shared<data::ImageFolderSource>(folder)),
                          input_shape, o.augment);
  }
  throw core::UsageError(
      "--data_backend must be idx, cifar, image_folder, caffe_lmdb or hdf5 with --data "
      "real, got '" +
      o.backend + "'");
}

}  // namespace

bool parse_data_kind(const std::string& name) {
  // DLBS's synthetic/device (and /gpu) is the engine's synthetic: one batch made once, on the
  // point's device; /pinned and /pageable keep it in host memory
  if (name == "synthetic" || name == "synthetic/device" || name == "synthetic/gpu" ||
      name == "synthetic/pinned" || name == "synthetic/pageable") {
    return false;
  }
  if (name == "real") return true;
  throw core::UsageError(
      "--data must be synthetic (DLBS's synthetic/device), synthetic/pinned, synthetic/pageable "
      "or real, got '" +
      name + "'");
}

SyntheticPlace synthetic_place(const std::string& name) {
  if (name == "synthetic/pinned") return SyntheticPlace::kPinned;
  if (name == "synthetic/pageable") return SyntheticPlace::kPageable;
  return SyntheticPlace::kDevice;
}

data::Pipeline point_pipeline(const DataOptions& o, const std::vector<int64_t>& input_shape,
                              int64_t classes, int64_t batch_size, uint64_t seed) {
  data::Pipeline pipeline = o.real
                                ? real_pipeline(o, input_shape)
                                : data::Pipeline(std::make_shared<data::SyntheticSource>(
                                      input_shape, classes, batch_size * kSyntheticBatches, seed));
  pipeline = pipeline.shuffle(o.shuffle).batch(batch_size, /*drop_last=*/true);
  if (o.loader_threads > 0) pipeline = pipeline.workers(o.loader_threads);
  if (pipeline.size() == 0) {
    throw core::UsageError("the data has fewer samples than one batch of " +
                           std::to_string(batch_size) + " (" + pipeline.describe() + ")");
  }
  return pipeline;
}

Feed::Feed(data::Pipeline pipeline, uint64_t seed) : pipeline_(std::move(pipeline)), seed_(seed) {}

Feed::~Feed() = default;

data::Batch Feed::next() {
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!reader_) reader_ = std::make_unique<data::EpochReader>(pipeline_, seed_, epoch_++);
    if (auto batch = reader_->next()) return std::move(*batch);
    reader_.reset();
  }
  throw core::DataError("the data yields no batch: " + pipeline_.describe());
}

}  // namespace engine::bench
