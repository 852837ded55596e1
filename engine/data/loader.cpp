#include "engine/data/loader.hpp"

#include <algorithm>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/grad_mode.h>

#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"
#include "engine/core/seed.hpp"
#include "engine/core/threads.hpp"
#include "engine/core/timer.hpp"

namespace engine::data {
namespace {

constexpr uint64_t kShuffleStream = 0x5348554646ULL;  // "SHUFF"
constexpr uint64_t kAugmentStream = 0x4155474dULL;    // "AUGM"

void check_same_shape(c10::IntArrayRef first, c10::IntArrayRef other) {
  if (other != first) {
    throw core::DataError("cannot batch samples of shapes " + core::shape_string(first) + " and " +
                          core::shape_string(other) +
                          ": map data.resize, data.center_crop or data.random_resized_crop "
                          "before :batch so that every sample has one shape");
  }
}

}  // namespace

torch::Tensor epoch_order(const Pipeline& pipeline, uint64_t seed, int64_t epoch) {
  // The whole source's order (the same on every rank), then take, then this rank's share.
  const int64_t n = pipeline.source().size();
  auto opts = torch::TensorOptions().dtype(torch::kInt64);
  torch::Tensor order;
  if (pipeline.shuffled()) {
    auto generator = at::make_generator<at::CPUGeneratorImpl>(
        core::derive_seed(seed, kShuffleStream, static_cast<uint64_t>(epoch)));
    order = torch::randperm(n, generator, opts);
  } else {
    order = torch::arange(n, opts);
  }
  order = order.slice(0, 0, pipeline.taken_samples());
  const int64_t world = pipeline.shard_world();
  if (world == 1) return order;
  if (!pipeline.shard_padded()) return order.slice(0, pipeline.shard_rank(), order.size(0), world);
  const int64_t per_rank = pipeline.num_samples();
  // wrap around so that every rank has per_rank samples
  auto padded = torch::arange(per_rank * world, opts).remainder_(order.size(0));
  return order.index_select(0, padded).slice(0, pipeline.shard_rank(), per_rank * world, world);
}

void stack_samples(Batch& batch) {
  if (batch.samples.empty()) return;
  for (const auto& s : batch.samples) check_same_shape(batch.samples.front().sizes(), s.sizes());
  batch.input = torch::stack(batch.samples);
  batch.samples.clear();
}

namespace {

// Runs each unstacked sample through transforms[0, count) and writes it into its row of the
// batch: only one sample's intermediates are alive at a time.
void transform_samples(Batch& batch,
                       const std::vector<std::shared_ptr<const Transform>>& transforms,
                       size_t count, std::vector<core::Rng>& random) {
  torch::Tensor stacked;
  const auto n = static_cast<int64_t>(batch.samples.size());
  for (int64_t i = 0; i < n; ++i) {
    auto x = std::move(batch.samples[static_cast<size_t>(i)]);
    core::Rng* rng = random.empty() ? nullptr : &random[static_cast<size_t>(i)];
    for (size_t t = 0; t < count; ++t) x = transforms[t]->apply_sample(x, rng);
    if (!stacked.defined()) {
      std::vector<int64_t> shape{n};
      shape.insert(shape.end(), x.sizes().begin(), x.sizes().end());
      stacked = torch::empty(shape, x.options());
    } else {
      check_same_shape(stacked.sizes().slice(1), x.sizes());
    }
    stacked[i].copy_(x);
  }
  batch.samples.clear();
  batch.input = stacked;
}

}  // namespace

EpochReader::EpochReader(const Pipeline& pipeline, uint64_t seed, int64_t epoch,
                         int64_t first_sample, bool pin_memory, bool to_device)
    : pipeline_(pipeline),
      pin_memory_(pin_memory),
      to_device_(to_device && pipeline.batched() &&
                 std::all_of(pipeline.transforms().begin(), pipeline.transforms().end(),
                             [](const auto& t) { return t->on_any_device(); })),
      augment_seed_(core::derive_seed(seed, kAugmentStream, static_cast<uint64_t>(epoch))),
      order_(epoch_order(pipeline, seed, epoch)),
      num_batches_(pipeline.size()) {
  for (const auto& t : pipeline_.transforms()) random_transforms_ |= t->random();
  const int64_t samples = std::min(order_.size(0), num_batches_ * pipeline_.batch_size());
  first_sample_ = std::clamp<int64_t>(first_sample, 0, samples);
  first_batch_ = std::min(first_sample_ / pipeline_.batch_size(), num_batches_);
  next_batch_ = first_batch_;
  const int workers = static_cast<int>(std::min<int64_t>(
      pipeline_.worker_count(), std::max<int64_t>(1, num_batches_ - next_batch_)));
  if (workers == 0) return;  // :workers(0): next() makes each batch on the calling thread
  capacity_ =
      static_cast<size_t>(std::max(1, (pipeline_.prefetch_depth() + workers - 1) / workers));
  for (int w = 0; w < workers; ++w) queues_.push_back(std::make_unique<Queue>());
  for (int w = 0; w < workers; ++w) threads_.emplace_back([this, w] { work(w); });
}

EpochReader::~EpochReader() {
  stop();
}

void EpochReader::stop() {
  stopping_ = true;
  for (auto& q : queues_) {
    std::lock_guard<std::mutex> lock(q->mutex);
    q->not_full.notify_all();
  }
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
}

Batch EpochReader::make_batch(int64_t index) const {
  const int64_t n = order_.size(0);
  const int64_t bs = pipeline_.batch_size();
  const int64_t begin = std::max(index * bs, first_sample_);
  const int64_t end = std::min(index * bs + bs, n);
  const auto indices = order_.slice(0, begin, end);
  Batch batch =
      to_device_ ? pipeline_.source().gather_bytes(indices) : pipeline_.source().gather(indices);
  if (!batch.indices.defined()) batch.indices = indices;
  batch.position = end;
  std::vector<core::Rng> random;
  if (random_transforms_) {
    auto index_of = batch.indices.accessor<int64_t, 1>();
    random.reserve(static_cast<size_t>(index_of.size(0)));
    for (int64_t i = 0; i < index_of.size(0); ++i) {
      random.emplace_back(
          core::derive_seed(augment_seed_, kAugmentStream, static_cast<uint64_t>(index_of[i])));
    }
  }
  const auto& transforms = pipeline_.transforms();
  if (to_device_ && batch.samples.empty()) return batch;  // the prefetcher transforms it
  size_t done = 0;
  if (!batch.samples.empty()) {
    while (done < transforms.size() && transforms[done]->per_sample()) ++done;
    transform_samples(batch, transforms, done, random);
  }
  for (size_t t = done; t < transforms.size(); ++t) transforms[t]->apply(batch, random);
  stack_samples(batch);
  if (!pipeline_.batched() && batch.size() == 1) {
    batch.input = batch.input.squeeze(0);
    if (batch.target.defined()) batch.target = batch.target.squeeze(0);
    if (batch.categorical.defined()) batch.categorical = batch.categorical.squeeze(0);
    for (auto& [key, tensor] : batch.inputs) tensor = tensor.squeeze(0);
  }
  return batch;
}

void EpochReader::work(int worker) {
  core::use_single_intraop_thread_here();
  at::NoGradGuard no_grad;
  const int workers = static_cast<int>(queues_.size());
  Queue& q = *queues_[worker];
  for (int64_t b = first_batch_ + worker; b < num_batches_ && !stopping_; b += workers) {
    Item item;
    try {
      item.batch = make_batch(b);
      if (pin_memory_) pin(item.batch);
    } catch (...) {
      item.error = std::current_exception();
    }
    std::unique_lock<std::mutex> lock(q.mutex);
    q.not_full.wait(lock, [&] { return stopping_ || q.items.size() < capacity_; });
    if (stopping_) return;
    const bool failed = static_cast<bool>(item.error);
    q.items.push_back(std::move(item));
    q.not_empty.notify_one();
    if (failed) return;
  }
}

std::vector<std::shared_ptr<const Transform>> EpochReader::device_transforms() const {
  if (!to_device_) return {};
  return pipeline_.transforms();
}

std::optional<Batch> EpochReader::next() {
  for (;;) {
    auto batch = next_produced();
    if (!batch) return batch;
    skipped_ += batch->skipped;
    batch->skipped_so_far = skipped_;
    if (batch->size() > 0) return batch;  // every record of this one was bad and skipped
  }
}

// Page-locked copies of the batch's tensors, which a copy to the GPU reads without staging
// (PyTorch's pin_memory): made here, in the worker, off the training thread.
void EpochReader::pin(Batch& batch) {
  for (auto* t : {&batch.input, &batch.target, &batch.categorical}) {
    if (t->defined() && t->device().is_cpu()) *t = t->pin_memory();
  }
  for (auto& [name, tensor] : batch.inputs) {
    if (tensor.device().is_cpu()) tensor = tensor.pin_memory();
  }
}

std::optional<Batch> EpochReader::next_produced() {
  if (next_batch_ >= num_batches_) return std::nullopt;
  if (queues_.empty()) return made_here();
  const int workers = static_cast<int>(queues_.size());
  // Worker w produces batches first + w, first + w + workers, ...
  Queue& q = *queues_[static_cast<size_t>((next_batch_ - first_batch_) % workers)];
  core::Timer waited;
  std::unique_lock<std::mutex> lock(q.mutex);
  q.not_empty.wait(lock, [&] { return !q.items.empty(); });
  wait_seconds_ += waited.seconds();
  Item item = std::move(q.items.front());
  q.items.pop_front();
  q.not_full.notify_one();
  lock.unlock();
  if (item.error) std::rethrow_exception(item.error);
  ++next_batch_;
  return std::move(item.batch);
}

// PyTorch's num_workers=0: the batch is made when it is asked for, on the asking thread, which
// then waits for it; wait_seconds counts that time.
std::optional<Batch> EpochReader::made_here() {
  core::Timer waited;
  at::NoGradGuard no_grad;
  Batch batch = make_batch(next_batch_);
  if (pin_memory_) pin(batch);
  wait_seconds_ += waited.seconds();
  ++next_batch_;
  return batch;
}

}  // namespace engine::data
