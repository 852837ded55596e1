// Batches handed to the trainer already on its device, the next one's copy overlapping the
// current step: what PyTorch users get from DataLoader(pin_memory=True) and a prefetcher that
// copies on a side stream (NVIDIA's DeepLearningExamples' data_prefetcher).
#pragma once

#include <c10/core/Event.h>
#include <c10/core/Stream.h>
#include <torch/types.h>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "engine/data/batch.hpp"
#include "engine/data/transform.hpp"

namespace engine::data {

class DevicePrefetcher {
 public:
  using Next = std::function<std::optional<Batch>()>;

  // Reads batches from `next` one ahead of the consumer. On an accelerator each batch's copy to
  // `device` is issued on a side stream with non_blocking (from pinned memory it overlaps the
  // step running meanwhile) and the consumer's stream waits for it before using the batch; on
  // the CPU batches pass through unchanged. Batches come out in the order `next` gives them,
  // each with its own position and skipped counts, so checkpoints record where the batch being
  // trained came from, not the one read ahead.
  // on_device: transforms the loader left to the device (EpochReader::device_transforms()),
  // applied after the copy, with image bytes (Batch::scale_bytes) turned into floats first.
  // target_range: each batch's int64 target's smallest and largest class are read on the host
  // (before the copy to an accelerator) into Batch::target_range.
  DevicePrefetcher(Next next, const torch::Device& device,
                   std::vector<std::shared_ptr<const Transform>> on_device = {},
                   bool target_range = false);
  DevicePrefetcher(const DevicePrefetcher&) = delete;
  DevicePrefetcher& operator=(const DevicePrefetcher&) = delete;

  // The next batch, its tensors on the device and ready on the current stream; nothing once
  // `next` has none.
  std::optional<Batch> next();

 private:
  void read_ahead();
  void transform(Batch& batch) const;

  Next next_;
  torch::Device device_;
  std::vector<std::shared_ptr<const Transform>> on_device_;
  bool target_range_ = false;
  bool started_ = false;
  std::optional<Batch> ahead_;
  std::optional<c10::Stream> side_;   // the copies' stream (accelerators only)
  std::optional<c10::Event> copied_;  // recorded on side_ after the read-ahead batch's copy
};

}  // namespace engine::data
