#include "engine/data/device_prefetcher.hpp"

#include <c10/core/StreamGuard.h>
#include <c10/core/impl/VirtualGuardImpl.h>

#include <utility>

#include "engine/core/int64_range.hpp"

namespace engine::data {
namespace {

template <class F>
void for_each_tensor(Batch& batch, F&& f) {
  for (auto* t : {&batch.input, &batch.target, &batch.categorical}) {
    if (t->defined()) f(*t);
  }
  for (auto& [name, tensor] : batch.inputs) f(tensor);
}

}  // namespace

DevicePrefetcher::DevicePrefetcher(Next next, const torch::Device& device,
                                   std::vector<std::shared_ptr<const Transform>> on_device,
                                   bool target_range)
    : next_(std::move(next)),
      device_(device),
      on_device_(std::move(on_device)),
      target_range_(target_range) {
  if (!device_.is_cpu()) {
    const c10::impl::VirtualGuardImpl guard(device_.type());
    side_ = guard.getStreamFromGlobalPool(device_);
  }
}

void DevicePrefetcher::read_ahead() {
  ahead_ = next_();
  if (!ahead_) return;
  const auto& target = ahead_->target;
  if (target_range_ && target.defined() && target.is_cpu() &&
      target.scalar_type() == torch::kInt64 && target.numel() > 0) {
    ahead_->target_range = core::int64_range(target);
  }
  if (!side_) {
    transform(*ahead_);
    return;
  }
  {
    const c10::StreamGuard on_side(*side_);
    for_each_tensor(*ahead_, [&](torch::Tensor& t) { t = t.to(device_, /*non_blocking=*/true); });
    transform(*ahead_);  // on the side stream too, behind the copy
  }
  copied_.emplace(device_.type());
  copied_->record(*side_);
}

void DevicePrefetcher::transform(Batch& batch) const {
  std::vector<core::Rng> no_random;  // on_any_device transforms draw nothing
  if (batch.scale_bytes) {  // the bytes to [0, 1] floats, as the source would have given them
    ToFloat().apply(batch, no_random);
    batch.scale_bytes = false;
  }
  for (const auto& t : on_device_) t->apply(batch, no_random);
}

std::optional<Batch> DevicePrefetcher::next() {
  if (!started_) {
    started_ = true;
    read_ahead();
  }
  if (!ahead_) return std::nullopt;
  Batch batch = std::move(*ahead_);
  ahead_.reset();
  if (copied_) {
    const c10::impl::VirtualGuardImpl guard(device_.type());
    const c10::Stream current = guard.getStream(device_);
    copied_->block(current);
    // memory allocated on the side stream is now used on this one: the caching allocator must
    // not hand it out again before this stream is done with it
    for_each_tensor(batch, [&](torch::Tensor& t) { t.record_stream(current); });
    copied_.reset();
  }
  read_ahead();  // the next copy runs while this batch is trained
  return batch;
}

}  // namespace engine::data
