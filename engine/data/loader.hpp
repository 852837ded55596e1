// Runs one epoch of a pipeline on worker threads, handing batches over in a fixed order
// through bounded queues (or, with no workers, on the thread that asks for each batch). The order
// depends only on the seed and the epoch, never on the number of workers, and an epoch can start at
// any sample (for resuming).
#pragma once

#include <torch/types.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "engine/data/batch.hpp"
#include "engine/data/pipeline.hpp"

namespace engine::data {

// The sample order of one epoch: a permutation seeded by (seed, epoch) when shuffled.
torch::Tensor epoch_order(const Pipeline& pipeline, uint64_t seed, int64_t epoch);

class EpochReader {
 public:
  // first_sample: samples of this epoch already consumed (0-based). The reader then yields the
  // rest of the batch holding that sample, and the following batches exactly as an epoch read
  // from the start would.
  // pin_memory: batches land in page-locked memory, for a copy to a CUDA device (the workers
  // pin them; a build or machine without CUDA cannot).
  // to_device: where every transform of the pipeline works on any device (normalisation), the
  // batches come out as the source's bytes, untransformed, for DevicePrefetcher to convert and
  // transform on the GPU (device_transforms() lists what it must apply).
  EpochReader(const Pipeline& pipeline, uint64_t seed, int64_t epoch, int64_t first_sample = 0,
              bool pin_memory = false, bool to_device = false);
  // The transforms left to the device: the pipeline's, when to_device could be honoured.
  std::vector<std::shared_ptr<const Transform>> device_transforms() const;
  ~EpochReader();
  EpochReader(const EpochReader&) = delete;
  EpochReader& operator=(const EpochReader&) = delete;

  // The next batch, or nothing at the end of the epoch. Rethrows a worker's error.
  std::optional<Batch> next();
  int64_t num_batches() const { return num_batches_; }
  // Seconds the consumer spent waiting for batches so far.
  double wait_seconds() const { return wait_seconds_; }
  // Bad records left out so far (sources read with skip_bad).
  int64_t skipped() const { return skipped_; }

 private:
  struct Item {
    Batch batch;
    std::exception_ptr error;
  };
  struct Queue {
    std::mutex mutex;
    std::condition_variable not_empty, not_full;
    std::deque<Item> items;
  };

  Batch make_batch(int64_t index) const;
  static void pin(Batch& batch);
  std::optional<Batch> next_produced();
  std::optional<Batch> made_here();
  void work(int worker);
  void stop();

  Pipeline pipeline_;
  bool pin_memory_ = false;
  bool to_device_ = false;  // honoured: the source's bytes, the transforms left to the device
  uint64_t augment_seed_;   // seeds per-sample random transforms, with the sample's index
  bool random_transforms_ = false;
  torch::Tensor order_;
  int64_t first_sample_ = 0;
  int64_t num_batches_ = 0;
  int64_t first_batch_ = 0;
  int64_t next_batch_ = 0;
  size_t capacity_ = 1;
  std::atomic<bool> stopping_{false};
  std::vector<std::unique_ptr<Queue>> queues_;
  std::vector<std::thread> threads_;
  double wait_seconds_ = 0;
  int64_t skipped_ = 0;
};

// Stacks samples that a source handed over one by one (batch.samples) into batch.input; a
// DataError names both shapes when they differ.
void stack_samples(Batch& batch);

}  // namespace engine::data
