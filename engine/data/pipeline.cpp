#include "engine/data/pipeline.hpp"

#include <algorithm>
#include <numeric>

#include "engine/core/errors.hpp"
#include "engine/core/seed.hpp"
#include "engine/core/threads.hpp"
#include "engine/data/subset_source.hpp"

namespace engine::data {
namespace {
constexpr uint64_t kSplitStream = 0x53504c54ULL;  // "SPLT"
}  // namespace

Pipeline::Pipeline(std::shared_ptr<const Source> source) : source_(std::move(source)) {
  if (!source_) throw core::UsageError("a pipeline needs a source");
}

Pipeline Pipeline::map(std::shared_ptr<const Transform> transform) const {
  if (!transform) throw core::UsageError(":map expects a transform");
  Pipeline p = *this;
  p.transforms_.push_back(std::move(transform));
  return p;
}

Pipeline Pipeline::shuffle(bool on) const {
  Pipeline p = *this;
  p.shuffle_ = on;
  return p;
}

Pipeline Pipeline::batch(int64_t batch_size, bool drop_last) const {
  if (batch_size < 1) {
    throw core::UsageError(":batch expects a positive batch size, got " +
                           std::to_string(batch_size));
  }
  if (batched()) throw core::UsageError(":batch applied twice to the same pipeline");
  Pipeline p = *this;
  p.batch_size_ = batch_size;
  p.drop_last_ = drop_last;
  return p;
}

Pipeline Pipeline::take(int64_t n) const {
  if (n < 1) throw core::UsageError(":take expects a positive count, got " + std::to_string(n));
  Pipeline p = *this;
  p.take_ = batched() ? n * batch_size_ : n;
  return p;
}

std::vector<Pipeline> Pipeline::split(const std::vector<double>& sizes, uint64_t seed) const {
  if (batched() || take_ > 0 || shard_world_ > 1) {
    throw core::UsageError(
        ":split divides a source's samples: call it before :batch, :take and "
        ":shard");
  }
  const int64_t total = source_->size();
  const auto counts = split_sizes(sizes, total);
  std::vector<int64_t> order(static_cast<size_t>(total));
  std::iota(order.begin(), order.end(), int64_t{0});
  core::Rng random(core::derive_seed(seed, kSplitStream, static_cast<uint64_t>(total)));
  for (int64_t i = total - 1; i > 0; --i) {  // Fisher-Yates
    std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(random.below(i + 1))]);
  }
  std::vector<Pipeline> parts;
  int64_t at = 0;
  for (size_t k = 0; k < counts.size(); ++k) {
    std::vector<int64_t> indices(order.begin() + at, order.begin() + at + counts[k]);
    at += counts[k];
    Pipeline part = *this;
    part.source_ = std::make_shared<SubsetSource>(
        source_, std::move(indices),
        "split " + std::to_string(k + 1) + " of " + std::to_string(counts.size()));
    parts.push_back(std::move(part));
  }
  return parts;
}

Pipeline Pipeline::shard(int64_t rank, int64_t world) const {
  if (world < 1 || rank < 0 || rank >= world) {
    throw core::UsageError(":shard(rank, world) needs 0 <= rank < world, got rank " +
                           std::to_string(rank) + " of " + std::to_string(world));
  }
  if (shard_world_ > 1) throw core::UsageError(":shard applied twice to the same pipeline");
  Pipeline p = *this;
  p.shard_rank_ = rank;
  p.shard_world_ = world;
  return p;
}

Pipeline Pipeline::training_share(int64_t rank, int64_t world) const {
  if (shard_world_ > 1) {
    throw core::UsageError(
        "the pipeline is sharded with :shard, but the trainer shards by itself in a "
        "distributed run: remove :shard");
  }
  if (world == 1) return *this;
  if (batched() && batch_size_ % world != 0) {
    throw core::UsageError(
        ":batch(" + std::to_string(batch_size_) + ") does not divide among " +
        std::to_string(world) + " processes: in a distributed run :batch(n) is the global batch, " +
        "split evenly over the ranks; choose n a multiple of " + std::to_string(world));
  }
  Pipeline p = shard(rank, world);
  if (batched()) p.batch_size_ = batch_size_ / world;
  return p;
}

Pipeline Pipeline::evaluation_share(int64_t rank, int64_t world) const {
  if (shard_world_ > 1 || world == 1) return *this;
  Pipeline p = shard(rank, world);
  p.shard_padded_ = false;
  return p;
}

int64_t Pipeline::taken_samples() const {
  const int64_t n = source_->size();
  return take_ > 0 ? std::min(take_, n) : n;
}

int64_t Pipeline::num_samples() const {
  const int64_t taken = taken_samples();
  if (!shard_padded_)
    return std::max<int64_t>(0, (taken - shard_rank_ + shard_world_ - 1) / shard_world_);
  return (taken + shard_world_ - 1) / shard_world_;
}

Pipeline Pipeline::prefetch(int batches) const {
  if (batches < 1) throw core::UsageError(":prefetch expects a positive number of batches");
  Pipeline p = *this;
  p.prefetch_ = batches;
  return p;
}

Pipeline Pipeline::workers(int count) const {
  if (count < 0) {
    throw core::UsageError(
        ":workers expects a number of threads, or 0 to load on the training "
        "thread (got " +
        std::to_string(count) + ")");
  }
  Pipeline p = *this;
  p.workers_ = count;
  return p;
}

int Pipeline::worker_count() const {
  // Training uses every core for libtorch; one loader thread per four cores keeps up with the
  // in-memory sources and leaves the rest to the model.
  return workers_ >= 0 ? workers_ : std::max(1, core::available_cores() / 4);
}

int64_t Pipeline::size() const {
  const int64_t n = num_samples();
  if (!batched()) return n;
  return drop_last_ ? n / batch_size_ : (n + batch_size_ - 1) / batch_size_;
}

std::string Pipeline::describe() const {
  std::string out = source_->describe();
  for (const auto& t : transforms_) out += " | " + t->describe();
  if (shuffle_) out += " | shuffle";
  if (take_ > 0) out += " | take(" + std::to_string(take_) + " samples)";
  if (shard_world_ > 1) {
    out += " | shard(" + std::to_string(shard_rank_) + " of " + std::to_string(shard_world_) +
           (shard_padded_ ? ")" : ", unpadded)");
  }
  if (batched())
    out += " | batch(" + std::to_string(batch_size_) + (drop_last_ ? ", drop_last)" : ")");
  return out;
}

}  // namespace engine::data
