// Sources: where samples come from. A source gathers any set of sample indices into a batch,
// so that loaders can shuffle, shard and resume by index alone.
#pragma once

#include <torch/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/data/batch.hpp"

namespace engine::io::h5 {
class Handle;  // an open HDF5 group (engine/io/hdf5.hpp); kept out of this header
}

namespace engine::data {

class Source {
 public:
  virtual ~Source() = default;
  virtual int64_t size() const = 0;
  // Gathers the samples at `indices` (int64, 0-based) into one batch. Must be thread-safe.
  virtual Batch gather(const torch::Tensor& indices) const = 0;
  // gather(), with image bytes left as uint8 where gather() would scale them to floats
  // (Batch::scale_bytes set): for a batch converted on the GPU. The default: gather().
  virtual Batch gather_bytes(const torch::Tensor& indices) const { return gather(indices); }
  // One line for logs and error messages, e.g. "mnist(train, 60000 samples)".
  virtual std::string describe() const = 0;
  // Bad records left out while the source was loaded (skip_bad, missing = 'skip').
  virtual int64_t skipped_at_load() const { return 0; }

  // What a checkpoint keeps so that new data is later read as this data was (a CSV's
  // normalisation, vocabularies and classes), written into the checkpoint's /data group.
  // Default: nothing to keep.
  virtual void save_state(const io::h5::Handle& data_group) const;
  // New samples read from `input` as this source reads its own, for engine predict (unlabelled,
  // or labelled where the input has labels). `saved`: the checkpoint's /data group, or a null
  // Handle for a checkpoint without one. The default reads a CSV whose 'path' column lists
  // images, when this source's samples are images of one size (MNIST, CIFAR, image tensors);
  // other sources throw UsageError.
  virtual std::shared_ptr<Source> prediction_source(const std::string& input,
                                                    const io::h5::Handle& saved) const;
  // When every target is a class index in [0, class_count) (checked as the data was loaded or
  // known by construction): the trainer then checks the model's outputs against it once instead
  // of reading each batch's targets. Nothing when the source cannot vouch for its targets.
  virtual std::optional<int64_t> class_count() const { return std::nullopt; }
  // The target classes' names (a CSV's class column, an image folder's subfolders); empty when
  // the classes have no names or the target is not a class.
  virtual std::vector<std::string> class_names() const { return {}; }
  // The file a sample was read from (an image listed for engine predict), or "" where
  // samples are no files of their own.
  virtual std::string sample_path(int64_t /*index*/) const { return {}; }
};

// Samples held in memory as two tensors whose first dimension is the sample index.
// Byte inputs are turned into float32 in [0, 1] when gathered (as torchvision's ToTensor does),
// so the dataset stays four times smaller in memory.
class TensorSource : public Source {
 public:
  // `inputs`: further named inputs, with as many rows as `input` (Batch::inputs).
  TensorSource(torch::Tensor input, torch::Tensor target, std::string name,
               std::map<std::string, torch::Tensor> inputs = {});
  int64_t size() const override { return input_.size(0); }
  Batch gather(const torch::Tensor& indices) const override;
  Batch gather_bytes(const torch::Tensor& indices) const override;
  std::string describe() const override;
  // int64 targets that are all 0 or more: their largest + 1.
  std::optional<int64_t> class_count() const override { return classes_; }

  const torch::Tensor& input() const { return input_; }
  const torch::Tensor& target() const { return target_; }
  const std::map<std::string, torch::Tensor>& inputs() const { return inputs_; }
  // New data for engine predict: an HDF5 file with a dataset per input, /input and /<name> (as
  // torch.save(path, {input = x, text = t}) writes it; no target is read), or, as every
  // source of images, a CSV listing image files.
  std::shared_ptr<Source> prediction_source(const std::string& input,
                                            const io::h5::Handle& saved) const override;

 private:
  torch::Tensor input_;
  torch::Tensor target_;
  std::map<std::string, torch::Tensor> inputs_;
  std::string name_;
  std::optional<int64_t> classes_;
};

}  // namespace engine::data
