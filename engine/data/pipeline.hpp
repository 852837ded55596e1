// A data pipeline as declared by a script: a source plus stages. An immutable value: each
// stage returns a new pipeline, so one source can feed several differently staged pipelines.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/data/source.hpp"
#include "engine/data/transform.hpp"

namespace engine::data {

class Pipeline {
 public:
  explicit Pipeline(std::shared_ptr<const Source> source);

  Pipeline map(std::shared_ptr<const Transform> transform) const;
  Pipeline shuffle(bool on = true) const;
  Pipeline batch(int64_t batch_size, bool drop_last = false) const;
  // The first n items of each epoch's order: samples, or batches when already batched.
  Pipeline take(int64_t n) const;
  // This process's share of each epoch: samples rank, rank + world, ... of the (shuffled,
  // taken) order, padded by wrapping around so that every rank gets the same count, as
  // PyTorch's DistributedSampler does. rank counts from 0.
  Pipeline shard(int64_t rank, int64_t world) const;
  // A rank's share in data-parallel training, where :batch(n) is the global batch: shards
  // padded as above (every rank takes the same number of steps, which their all-reduce needs),
  // each rank's batch n / world. A UsageError when n does not divide by the world.
  Pipeline training_share(int64_t rank, int64_t world) const;
  // A rank's share for evaluation: samples rank, rank + world, ... without padding, so that
  // each sample counts once in the metrics summed over the ranks; the batch size is kept.
  Pipeline evaluation_share(int64_t rank, int64_t world) const;
  // Disjoint parts of the source, for train and validation from one dataset: `sizes` as
  // split_sizes reads them (fractions or counts), the samples drawn by a permutation that
  // depends on `seed` and the source's size alone (the same parts every run and on resume).
  // The stages so far (map, shuffle) stay on each part; a batched, taken or sharded pipeline
  // is a UsageError: split first.
  std::vector<Pipeline> split(const std::vector<double>& sizes, uint64_t seed) const;
  Pipeline prefetch(int batches) const;
  Pipeline workers(int count) const;

  const Source& source() const { return *source_; }
  const std::vector<std::shared_ptr<const Transform>>& transforms() const { return transforms_; }
  bool shuffled() const { return shuffle_; }
  bool batched() const { return batch_size_ > 0; }
  int64_t batch_size() const { return batch_size_ > 0 ? batch_size_ : 1; }
  bool drop_last() const { return drop_last_; }
  int prefetch_depth() const { return prefetch_; }
  int worker_count() const;  // resolved: the declared count, or a default for this machine

  // Number of items one epoch yields: batches when batched, samples otherwise.
  int64_t size() const;
  // Samples one epoch yields to this process, after take and shard.
  int64_t num_samples() const;
  int64_t taken_samples() const;  // after take, before shard
  int64_t shard_rank() const { return shard_rank_; }
  int64_t shard_world() const { return shard_world_; }
  bool shard_padded() const { return shard_padded_; }
  std::string describe() const;

 private:
  std::shared_ptr<const Source> source_;
  std::vector<std::shared_ptr<const Transform>> transforms_;
  bool shuffle_ = false;
  int64_t batch_size_ = 0;  // 0: unbatched, one sample per item
  bool drop_last_ = false;
  int64_t take_ = 0;  // samples; 0: all
  int64_t shard_rank_ = 0;
  int64_t shard_world_ = 1;
  bool shard_padded_ = true;
  int prefetch_ = 4;
  int workers_ = -1;  // -1: default; 0: batches made on the consuming thread
};

}  // namespace engine::data
