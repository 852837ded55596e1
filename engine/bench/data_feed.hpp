// The data a benchmark point reads: DLBS's --data synthetic (a batch made once and fed every
// time, or for data_ingestion the synthetic source through the loader) or --data real (a
// dataset through the engine's threaded loader, as training reads it).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/data/batch.hpp"
#include "engine/data/pipeline.hpp"

namespace engine::data {
class EpochReader;
}

namespace engine::bench {

// Where a synthetic batch lives (DLBS's --data synthetic/device, /pinned, /pageable): on the
// point's device, made once; or in host memory (page-locked or not), copied to the device for
// every batch as a loader's batch would be (on the CPU the same as the device).
enum class SyntheticPlace { kDevice, kPinned, kPageable };

struct DataOptions {
  bool real = false;  // --data real
  SyntheticPlace place = SyntheticPlace::kDevice;
  std::string dir;         // --data_dir: the dataset's folder (an HDF5 file for hdf5)
  std::string backend;     // --data_backend idx | cifar | image_folder | hdf5
  bool shuffle = false;    // --data_shuffle
  int loader_threads = 0;  // --num_loader_threads; 0: the loader's default
  // Images (image_folder, caffe_lmdb) through DLBS's training transforms, RandomResizedCrop to
  // the model's input and a horizontal flip (training, data_ingestion); else resized and
  // center-cropped (inference).
  bool augment = true;
};

// "synthetic" (DLBS's synthetic/device and synthetic/gpu too), synthetic/pinned,
// synthetic/pageable or "real"; anything else is a UsageError naming --data. True for real.
bool parse_data_kind(const std::string& name);
SyntheticPlace synthetic_place(const std::string& name);  // kDevice for real

// The pipeline of a point: batches of batch_size (the last partial one dropped), read from the
// backend's dataset (images cropped to the model's input as DLBS does, see augment) or from
// a synthetic source of input_shape samples. Throws a UsageError naming --data_dir or
// --data_backend when they are missing or unknown.
data::Pipeline point_pipeline(const DataOptions& options, const std::vector<int64_t>& input_shape,
                              int64_t classes, int64_t batch_size, uint64_t seed);

// Batches from a pipeline without end: a new epoch starts when one runs out.
class Feed {
 public:
  Feed(data::Pipeline pipeline, uint64_t seed);
  ~Feed();
  data::Batch next();

 private:
  data::Pipeline pipeline_;
  uint64_t seed_;
  int64_t epoch_ = 0;
  std::unique_ptr<data::EpochReader> reader_;
};

}  // namespace engine::bench
